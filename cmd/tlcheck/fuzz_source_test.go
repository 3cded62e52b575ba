package main

import (
	"os"
	"strings"
	"testing"
)

// TestFuzzSourceFindsCodegenFault: a codegen fault is hunted with source
// programs; the shrunk program is printed and written beside its trace,
// which tlcheck replay rejects.
func TestFuzzSourceFindsCodegenFault(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := tlcheck(false, "fuzz", "--fault", "block-result-freed", "--time", "20s", "--seed", "1", "--out", dir)
	if code != exitViolation {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitViolation, out, errOut)
	}
	for _, want := range []string{"property broken: source-", "fn main() {", "program written to ", `{"format":"tlcheck-trace"`} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	m := reproduceLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("stdout has no reproduce line:\n%s", out)
	}
	src, err := os.ReadFile(strings.TrimSuffix(m[1], ".jsonl") + ".tl")
	if err != nil || !strings.Contains(out, string(src)) {
		t.Errorf("the source program beside the trace (%v) is not the one printed:\n%s", err, src)
	}
	if code, rout, rerr := tlcheck(false, "replay", m[1]); code != exitViolation {
		t.Errorf("tlcheck replay %s: exit %d, want %d\n%s%s", m[1], code, exitViolation, rout, rerr)
	}
}

// TestFuzzSourceCleanRuntime: --source against the correct runtime finds
// nothing.
func TestFuzzSourceCleanRuntime(t *testing.T) {
	code, out, errOut := tlcheck(false, "fuzz", "--source", "--time", "300ms", "--seed", "3", "--out", t.TempDir())
	if code != exitClean || !strings.Contains(out, "source programs against the lowering and the runtime") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}
