package properties

import (
	"testing"

	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// TestResolveManyObjects: a ref resolves among 256 objects alive (or 256
// dead addresses) as among any number: long programs (package drive's)
// have that many, and a byte's modulus of 256 is 0.
func TestResolveManyObjects(t *testing.T) {
	for _, n := range []int{255, 256, 257, 512} {
		p := Program{Steps: []flat.Step{{Op: traces.OpScopeEnter}}}
		for range n {
			p.Steps = append(p.Steps, flat.Step{Op: traces.OpAlloc, Size: 16})
		}
		p.Steps = append(p.Steps, flat.Step{Op: traces.OpAcquire, Target: flat.Ref{Pick: flat.Live, Index: 7}},
			flat.Step{Op: traces.OpScopeExit}, flat.Step{Op: traces.OpScopeEnter},
			flat.Step{Op: traces.OpRelease, Target: flat.Ref{Pick: flat.Dead, Index: 9}})
		r := Resolve(p)
		if got := r.Calls[n+1].Step.Target; got != (flat.Ref{Pick: flat.Live, Index: 7}) {
			t.Errorf("%d objects alive: acquire live[7] resolved as %v", n, got)
		}
		if got := r.Calls[n+4].Step.Target; got.Pick != flat.Dead || int(got.Index) != 9%n {
			t.Errorf("%d dead addresses: release dead[9] resolved as %v", n, got)
		}
	}
}
