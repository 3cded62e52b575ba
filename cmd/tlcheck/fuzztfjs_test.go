package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tfjsDriverLine is the --exec line of examples/tfjsdriver, or a skip
// where node or its node_modules (npm ci there) is missing.
func tfjsDriverLine(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node on the PATH: install Node.js (20 or later) to run the TensorFlow.js checks")
	}
	dir := filepath.Join("..", "..", "examples", "tfjsdriver")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@tensorflow", "tfjs-core")); err != nil {
		t.Skip("examples/tfjsdriver/node_modules is missing: run npm ci there to run the TensorFlow.js checks")
	}
	return "node " + shellQuote(dir)
}

// TestFuzzExecTfjs: tlcheck fuzz --exec searches and replays a driver of
// tfjs programs: clean on the real tfjs, a fault found, shrunk, written and
// replayed.
func TestFuzzExecTfjs(t *testing.T) {
	line := tfjsDriverLine(t)
	code, out, errOut := tlcheck(false, "fuzz", "--exec", line, "--time", "2s", "--seed", "1", "--call-timeout", "20s")
	if code != exitClean || !strings.Contains(out, "tfjs programs") || !strings.Contains(out, "no failure") {
		t.Fatalf("real tfjs: exit %d\n%s%s", code, out, errOut)
	}
	dir := t.TempDir()
	faulty := line + " --faults=tidy-forgets-keep"
	code, out, errOut = tlcheck(false, "fuzz", "--exec", faulty, "--time", "60s", "--seed", "1", "--out", dir, "--call-timeout", "20s")
	if code != exitViolation {
		t.Fatalf("tidy-forgets-keep: exit %d, want 1\n%s%s", code, out, errOut)
	}
	m := execReproduce.FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "premature-free") {
		t.Fatalf("no premature-free and reproduce line:\n%s", out)
	}
	if code, rout, rerr := tlcheck(false, "fuzz", "--exec", faulty, "--replay", m[2], "--call-timeout", "20s"); code != exitViolation || !strings.Contains(rout, "premature-free") {
		t.Errorf("--replay on the faulty tfjs: exit %d, want 1\n%s%s", code, rout, rerr)
	}
	if code, rout, rerr := tlcheck(false, "fuzz", "--exec", line, "--replay", m[2], "--call-timeout", "20s"); code != exitClean {
		t.Errorf("--replay on the real tfjs: exit %d, want 0\n%s%s", code, rout, rerr)
	}
}
