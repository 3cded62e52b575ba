package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cDriver builds examples/cruntime's driver, or skips without gcc.
func cDriver(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	src := filepath.Join("..", "..", "examples", "cruntime")
	bin := filepath.Join(t.TempDir(), "tlrt driver") // a space, which --exec must quote
	if out, err := exec.Command("gcc", "-O2", "-o", bin, filepath.Join(src, "tlrt.c"), filepath.Join(src, "driver.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

var execReproduce = regexp.MustCompile(`(?m)^reproduce: tlcheck fuzz --exec (.+) --replay (\S+)$`)

func TestFuzzExec(t *testing.T) {
	bin := cDriver(t)
	line := shellQuote(bin)
	code, out, errOut := tlcheck(false, "fuzz", "--exec", line, "--time", "1s", "--seed", "1")
	if code != exitClean || !strings.Contains(out, "no failure") {
		t.Fatalf("clean runtime: exit %d\n%s%s", code, out, errOut)
	}

	dir := t.TempDir()
	faulty := line + " --faults=unregister-releases"
	code, out, errOut = tlcheck(false, "fuzz", "--exec", faulty, "--time", "20s", "--seed", "1", "--out", dir)
	if code != exitViolation {
		t.Fatalf("faulty runtime: exit %d, want 1\n%s%s", code, out, errOut)
	}
	m := execReproduce.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "premature-free") {
		t.Fatalf("no premature-free and reproduce line:\n%s", out)
	}
	calls := m[2]
	trace := strings.TrimSuffix(calls, ".calls.jsonl") + ".trace.jsonl"
	if code, rout, rerr := tlcheck(false, "replay", trace); code != exitViolation {
		t.Errorf("tlcheck replay %s: exit %d, want 1\n%s%s", trace, code, rout, rerr)
	}
	if code, rout, rerr := tlcheck(false, "fuzz", "--exec", faulty, "--replay", calls); code != exitViolation || !strings.Contains(rout, "premature-free") {
		t.Errorf("--replay on the faulty runtime: exit %d, want 1\n%s%s", code, rout, rerr)
	}
	if code, rout, rerr := tlcheck(false, "fuzz", "--exec", line, "--replay", calls); code != exitClean {
		t.Errorf("--replay on the clean runtime: exit %d, want 0\n%s%s", code, rout, rerr)
	}
	layer3 := filepath.Join(t.TempDir(), "frames.calls.jsonl")
	if err := os.WriteFile(layer3, []byte(`{"op":"fn_enter","slots":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, rout, rerr := tlcheck(false, "fuzz", "--exec", line, "--replay", layer3); code != exitInput || !strings.Contains(rerr, "does not take fn_enter") {
		t.Errorf("--replay of a call the driver does not take: exit %d, want 2\n%s%s", code, rout, rerr)
	}
}

func TestFuzzExecUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"fuzz", "--exec", ""}, exitInput, "want the driver's command line"},
		{[]string{"fuzz", "--exec", "'unclosed"}, exitInput, "an unclosed '"},
		{[]string{"fuzz", "--exec", "/nonexistent/driver"}, exitInput, "no such file"},
		{[]string{"fuzz", "--exec", "true", "--replay", "/nonexistent/calls"}, exitInput, "--replay"},
		{[]string{"fuzz", "--exec=true", "--time", "-1s"}, exitInput, "positive durations"},
	} {
		code, out, errOut := tlcheck(false, tc.args...)
		if code != tc.code || !strings.Contains(out+errOut, tc.says) {
			t.Errorf("%q: exit %d, want %d saying %q\n%s%s", tc.args, code, tc.code, tc.says, out, errOut)
		}
	}
}
