package flat

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// ShrinkWith shrinks by the caller's judgement alone: a program "fails"
// here when it releases something, and shrinks to the one release.
func TestShrinkWith(t *testing.T) {
	releases := func(p Program) bool {
		return slices.ContainsFunc(p.Steps, func(s Step) bool { return s.Op == traces.OpRelease })
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		p := Generate(r)
		if !releases(p) {
			continue
		}
		runs := 0
		got := ShrinkWith(p, func(c Program) (Program, bool) {
			runs++
			return c, releases(c)
		})
		if len(got.Steps) != 1 || got.Steps[0].Op != traces.OpRelease {
			t.Fatalf("shrunk %d steps to\n%v\nwant one release", len(p.Steps), got)
		}
		if runs == 0 || runs > MaxShrinkRuns {
			t.Errorf("%d runs", runs)
		}
	}
}
