package main

import (
	"os"
	"path/filepath"
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
	tl := strings.TrimSuffix(m[1], ".jsonl") + ".tl"
	src, err := os.ReadFile(tl)
	// The program as printed, after comments that say how it was found
	// and how to check it again.
	prog := string(src)
	for strings.HasPrefix(prog, "//") {
		_, prog, _ = strings.Cut(prog, "\n")
	}
	if err != nil || prog == "" || !strings.Contains(out, prog) {
		t.Errorf("the source program beside the trace (%v) is not the one printed:\n%s", err, src)
	}
	if !strings.Contains(string(src), "// Check it again, lowered by the code of today: tlcheck fuzz --replay THIS_FILE --fault block-result-freed\n") {
		t.Errorf("the program does not say how to check it again:\n%s", src)
	}
	if code, rout, rerr := tlcheck(false, "replay", m[1]); code != exitViolation {
		t.Errorf("tlcheck replay %s: exit %d, want %d\n%s%s", m[1], code, exitViolation, rout, rerr)
	}
	// The command stdout gives checks the saved program again: it still
	// fails with the fault, and passes without it.
	if !strings.Contains(out, "check the program again after a change: tlcheck fuzz --replay "+tl+" --fault block-result-freed\n") {
		t.Errorf("stdout does not give the command that checks the program again:\n%s", out)
	}
	if code, rout, rerr := tlcheck(false, "fuzz", "--replay", tl, "--fault", "block-result-freed"); code != exitViolation {
		t.Errorf("fuzz --replay %s --fault block-result-freed: exit %d, want %d\n%s%s", tl, code, exitViolation, rout, rerr)
	}
	if code, rout, rerr := tlcheck(false, "fuzz", "--replay", tl); code != exitClean {
		t.Errorf("fuzz --replay %s: exit %d, want %d\n%s%s", tl, code, exitClean, rout, rerr)
	}
}

// TestFuzzReplaySource: fuzz --replay lowers a saved program with the
// code of today and checks it: clean, a failure with the property and the
// program, or bad input named by place.
func TestFuzzReplaySource(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// Issue 17's counterexample, found on the correct path before its fix.
	issue := write("issue17.tl", `// found by tlcheck fuzz --source --seed 3
fn main() {
    let v1 = zeros(32);
    for i0 in 0..1 {
        let v2 = v1;
    }
    for i0 in 0..2 {
        let v3 = add(v1);
        let v4 = zeros(32);
    }
}
`)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string // in stdout, or with exit 2 in stderr
	}{
		{"clean", []string{issue}, exitClean, "issue17.tl (6 statements) against the lowering and the runtime: no failure"},
		{"with the fault it pins", []string{issue, "--fault", "loop-life-ends-first-loop"}, exitViolation,
			"property broken: source-trace\nthe trace shows stale-reuse at event 29: read through variable \"v1\""},
		{"syntax", []string{write("syntax.tl", "fn main() {\n    let a = ;\n}\n")}, exitInput, "syntax.tl: lang: line 2, column 13: want an expression"},
		{"ill-formed", []string{write("unbound.tl", "fn main() { let a = b; }")}, exitInput, "unbound.tl: lang: fn main: statement 0: variable b is not in scope"},
		{"missing", []string{filepath.Join(dir, "none.tl")}, exitInput, "--replay: open "},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := tlcheck(false, append([]string{"fuzz", "--replay"}, c.args...)...)
			got := out
			if c.code == exitInput {
				got = errOut
			}
			if code != c.code || !strings.Contains(got, c.want) {
				t.Errorf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, c.code, c.want, out, errOut)
			}
		})
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
