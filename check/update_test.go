package check

import (
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// TestBaselineUpdate: an update replaces the traces the run checked,
// keeps the others unchanged (or drops them under prune), and returns
// those others sorted by name either way.
func TestBaselineUpdate(t *testing.T) {
	old := &Baseline{Format: BaselineFormat, Version: BaselineVersion, Traces: []BaselineTrace{
		{Trace: "a", LeakedBytes: 1, Findings: []BaselineFinding{{Fingerprint{Kind: traces.Leak, AllocSite: "x.c:1"}, 3}}},
		{Trace: "c", LeakedBytes: 2},
		{Trace: "z", PeakLiveBytes: 9, Findings: []BaselineFinding{{Fingerprint{Kind: traces.Leak}, 1}}},
	}}
	run := []Outcome{Of("c", traces.Report{Complete: true, Leaked: traces.Totals{Bytes: 7}}, &Policy{}), Of("b", traces.Report{Complete: true}, &Policy{})}
	names := func(ts []BaselineTrace) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.Trace)
		}
		return out
	}
	nb, notRun := old.Update(run, false)
	if got := names(nb.Traces); !slices.Equal(got, []string{"a", "b", "c", "z"}) {
		t.Errorf("kept: traces %v", got)
	}
	if got := names(notRun); !slices.Equal(got, []string{"a", "z"}) {
		t.Errorf("not run: %v", got)
	}
	if a := nb.Find("a"); a == nil || a.Accepted() != 3 || a.LeakedBytes != 1 {
		t.Errorf("a was not kept as it was: %+v", a)
	}
	if c := nb.Find("c"); c == nil || c.LeakedBytes != 7 {
		t.Errorf("c is not the run's: %+v", c)
	}
	nb, notRun = old.Update(run, true)
	if got := names(nb.Traces); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("pruned: traces %v", got)
	}
	if got := names(notRun); !slices.Equal(got, []string{"a", "z"}) {
		t.Errorf("pruned, not run: %v", got)
	}
}
