package flat

import (
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// TestResolveManyObjects: a ref resolves among 256 objects alive (or 256
// dead ones) as among any number: long programs (package drive's) have
// that many, and a byte's modulus of 256 is 0.
func TestResolveManyObjects(t *testing.T) {
	for _, n := range []int{255, 256, 257, 512} {
		p := Program{Steps: []Step{{Op: traces.OpScopeEnter}}}
		for range n {
			p.Steps = append(p.Steps, Step{Op: traces.OpAlloc, Size: 16})
		}
		p.Steps = append(p.Steps, Step{Op: traces.OpAcquire, Target: Ref{Pick: Live, Index: 7}},
			Step{Op: traces.OpScopeExit}, Step{Op: traces.OpScopeEnter},
			Step{Op: traces.OpRelease, Target: Ref{Pick: Dead, Index: 9}})
		r := Resolve(p)
		if got := r[n+1].Step.Target; got != (Ref{Pick: Live, Index: 7}) {
			t.Errorf("%d objects alive: acquire live[7] resolved as %v", n, got)
		}
		if got := r[n+4].Step.Target; got.Pick != Dead || int(got.Index) != 9%n {
			t.Errorf("%d dead objects: release dead[9] resolved as %v", n, got)
		}
	}
}
