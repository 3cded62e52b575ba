package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestFuzzExecEndKeepsResult: a driver that misbehaves at the end of its
// input (a failing exit, junk after its last answer) is a finding that
// loses nothing: the search's summary, the driver's stderr and a calls
// file of its last program, whose --replay shows the same end.
func TestFuzzExecEndKeepsResult(t *testing.T) {
	drv := shellQuote(goDriver(t))
	for _, tc := range []struct{ name, line, says string }{
		{"exit 4", `sh -c '` + drv + `; echo "dying at the end" >&2; exit 4'`, "exit status 4"},
		{"junk", `sh -c '` + drv + `; echo goodbye'`, `"goodbye" after its last answer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			code, out, errOut := tlcheck(false, "fuzz", "--exec", tc.line, "--time", "300ms", "--seed", "1", "--out", dir)
			for _, want := range []string{"no failure in the programs", "misbehaved at the end of its input", tc.says, "the last program it ran written to"} {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q", want)
				}
			}
			if tc.name == "exit 4" && !strings.Contains(out, "dying at the end") {
				t.Errorf("stdout lacks the driver's stderr")
			}
			if code != exitViolation {
				t.Errorf("exit %d, want 1", code)
			}
			m := regexp.MustCompile(`(?m)^reproduce: tlcheck fuzz --exec .+ --replay (\S+)$`).FindStringSubmatch(out)
			if t.Failed() || m == nil {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			code, rout, rerr := tlcheck(false, "fuzz", "--exec", tc.line, "--replay", m[1])
			if code != exitViolation || !strings.Contains(rout, "misbehaved at the end of its input") || !strings.Contains(rout, `{"op":"end"}`) {
				t.Errorf("--replay %s: exit %d, want 1 with the listing and the end\n%s%s", m[1], code, rout, rerr)
			}
		})
	}
}

// TestFuzzAgainstEndKept: with --against, a driver that misbehaves at the
// end of its input is reported after the comparison's summary, naming
// the driver, where the end went unseen.
func TestFuzzAgainstEndKept(t *testing.T) {
	drv := shellQuote(goDriver(t)) + " -autograd"
	code, out, errOut := tlcheck(false, "fuzz", "--exec", drv, "--against", `sh -c '`+drv+`; exit 3'`, "--time", "300ms", "--seed", "1", "--out", t.TempDir())
	if code != exitViolation || !strings.Contains(out, "no disagreement") ||
		!strings.Contains(out, "driver B (--against) misbehaved at the end of its input: driver exit: it exited (exit status 3)") {
		t.Errorf("exit %d, want 1 with the summary and driver B's end\n%s%s", code, out, errOut)
	}
}
