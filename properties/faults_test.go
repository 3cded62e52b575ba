package properties

import (
	"bytes"
	"testing"

	"github.com/leanovate/gopter"
	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/internal/proptest"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// Budgets of the proof of power: every fault must be caught within them.
const (
	huntPrograms   = 5000 // generated programs Search may run per fault
	maxShrunkTrace = 12   // events in a shrunk counterexample
	gopterTests    = 1000 // gopter runs per fault
	// rapid's checks and seed in the proofs of power (see proptest).
	rapidChecks = proptest.RapidChecks
	rapidSeed   = proptest.RapidSeed
)

// TestEveryFaultIsCaught is the proof of power: each fault of the catalog,
// switched on alone, must make the rapid property fail, the gopter property
// fail, and Search find a program that Shrink brings down to a trace of a
// few events which the model, replaying it, rejects.
func TestEveryFaultIsCaught(t *testing.T) {
	setFlag(t, "rapid.nofailfile", "true") // failures here are expected: keep testdata clean
	setFlag(t, "rapid.seed", rapidSeed)
	setFlag(t, "rapid.checks", rapidChecks)
	setFlag(t, "rapid.shrinktime", "100ms") // failing is what counts here, not rapid's shrinking
	for _, fi := range impl.Catalog() {
		if fi.Engine != impl.EngineProgram {
			continue // another engine's fault: generated programs cannot reach it
		}
		cfg := impl.Config{Faults: []impl.Fault{fi.Name}}
		t.Run(string(fi.Name), func(t *testing.T) {
			t.Run("rapid", func(t *testing.T) {
				tb := &silentTB{name: t.Name()}
				rapid.Check(tb, rapidProperty(cfg))
				if !tb.Failed() {
					t.Errorf("fault %s escaped the rapid property (%s checks)\ntrigger: %s", fi.Name, rapidChecks, fi.Trigger)
				}
			})
			t.Run("gopter", func(t *testing.T) {
				ok, res := gopterRun(cfg, 1, gopterTests)
				if ok {
					t.Errorf("fault %s escaped the gopter property (%d runs)\ntrigger: %s", fi.Name, gopterTests, fi.Trigger)
				} else if res.Status != gopter.TestFailed && res.Status != gopter.TestError {
					t.Errorf("gopter did not fail the property but ended %v", res.Status)
				}
			})
			t.Run("hunt", func(t *testing.T) {
				p, f, n := Search(cfg, 1, func(n int) bool { return n < huntPrograms })
				if f == nil {
					t.Fatalf("fault %s escaped %d generated programs\ntrigger: %s", fi.Name, n, fi.Trigger)
				}
				small, sf := Shrink(p, cfg)
				if sf == nil {
					t.Fatalf("the failing program no longer fails when shrunk:\n%v", p)
				}
				t.Logf("caught after %d programs by %s; shrunk %d steps to %d, trace of %d events",
					n, sf.Property, len(p.Steps), len(small.Steps), sf.Events())
				if sf.Events() > maxShrunkTrace {
					t.Errorf("shrunk trace has %d events, want at most %d:\n%s", sf.Events(), maxShrunkTrace, traceText(sf.Result))
				}
				if _, g := Run(small, impl.Config{}); g != nil {
					t.Errorf("the counterexample fails without the fault too (%v): it shows another bug", g)
				}
				if rep := replay(t, sf); len(rep.Violations) == 0 {
					t.Errorf("replaying the shrunk trace reports no violation (the failure was %v):\n%s", sf, traceText(sf.Result))
				}
			})
		})
	}
}

// replay writes the failure's trace, reads it back and replays it: what
// `tlcheck replay` does with the file.
func replay(t *testing.T, f *Failure) traces.Report {
	t.Helper()
	var buf bytes.Buffer
	if err := f.WriteTrace(&buf); err != nil {
		t.Fatal(err)
	}
	src, err := traces.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := model.Replay(src)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
