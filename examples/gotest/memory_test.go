package gotest

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/report"
)

// gate replays trace against the model and compares its findings with
// the baseline's entry for name: what a project's TestMemory does with the
// trace its runtime just wrote.
func gate(t *testing.T, name, trace string) (check.Outcome, *check.Policy) {
	t.Helper()
	b, err := check.ReadBaseline("testdata/baseline.json")
	if err != nil {
		t.Fatal(err)
	}
	p := &check.Policy{RequireEnd: true} // every kind fails; a trace cut short fails too
	o := check.File(trace, input.Options{}, p, 0)
	if o.Err != nil {
		t.Fatal(o.Err) // an unreadable trace names its file, line and field
	}
	var tol check.Tolerance
	if err := tol.Set("10%,1KiB"); err != nil {
		t.Fatal(err)
	}
	o.Compare(b.Find(check.TraceKey(name)), tol)
	return o, p
}

// TestMemory gates the training step's trace: the one leak the baseline
// accepts passes, anything new fails the test with tlcheck's own report.
func TestMemory(t *testing.T) {
	o, p := gate(t, "testdata/train.jsonl", "testdata/train.jsonl")
	if o.Status(p) != check.Pass {
		var b strings.Builder
		report.Write(&b, report.Text, []check.Outcome{o}, p, report.Run{Command: "gate", Baseline: "testdata/baseline.json"})
		t.Errorf("memory gate: %s\n%s", strings.Join(o.FailureReasons(p), ", "), b.String())
	}
}

// TestMemoryGateCatchesARegression shows that the gate above can fail: the
// same step after a change that forgets a free leaks a block the baseline
// does not accept.
func TestMemoryGateCatchesARegression(t *testing.T) {
	o, p := gate(t, "testdata/train.jsonl", "testdata/train-regressed.jsonl")
	if o.Status(p) != check.Fail {
		t.Fatalf("status %v, want fail", o.Status(p))
	}
	var b strings.Builder
	report.Write(&b, report.Text, []check.Outcome{o}, p, report.Run{Command: "gate", Baseline: "testdata/baseline.json"})
	for _, want := range []string{"ERROR: leak", "step.go:30", "GATE: FAIL: 1 new finding"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, b.String())
		}
	}
}
