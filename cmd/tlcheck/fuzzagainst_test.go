package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goDriver builds examples/impldriver, the Go runtime's driver.
func goDriver(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "impldriver")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/impldriver").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestFuzzAgainst(t *testing.T) {
	bin := shellQuote(goDriver(t)) + " -autograd"
	code, out, errOut := tlcheck(false, "fuzz", "--exec", bin, "--against", bin, "--time", "1s", "--seed", "1")
	if code != exitClean || !strings.Contains(out, "no disagreement") || !strings.Contains(out, "driver B notes: matmul is torch.mm") {
		t.Fatalf("the engine against itself: exit %d\n%s%s", code, out, errOut)
	}
	dir := t.TempDir()
	faulty := bin + " -fault autograd-double-bump"
	code, out, errOut = tlcheck(false, "fuzz", "--exec", bin, "--against", faulty, "--time", "20s", "--seed", "1", "--out", dir)
	if code != exitViolation || !strings.Contains(out, "disagree at call") || !strings.Contains(out, "tensor.version") {
		t.Fatalf("against a faulty engine: exit %d, want 1 and a version\n%s%s", code, out, errOut)
	}
	m := regexp.MustCompile(`(?m)^calls written to (\S+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no calls file named:\n%s", out)
	}
	text, err := os.ReadFile(m[1])
	if err != nil || !strings.Contains(string(text), "# tlcheck-drive disagreement at call") || !strings.Contains(string(text), `{"op":"end"}`) {
		t.Errorf("calls file %s: %v\n%s", m[1], err, text)
	}
	if code, _, errOut := tlcheck(false, "fuzz", "--exec", bin, "--against", "'"); code != exitInput || !strings.Contains(errOut, "--against") {
		t.Errorf("--against with an unclosed quote: exit %d, want 2\n%s", code, errOut)
	}
}
