package autograd_test

import (
	"fmt"

	"github.com/tlcheck/tlcheck/properties/autograd"
)

// A failing layer-5 program made small: the failure here is any backward
// of a tensor computed by exp, and the shrinker keeps a leaf, its exp and
// a backward of it (the sum bypassed, the product too), plainer (no
// retain_graph), numbered again.
func ExampleShrink() {
	calls := []autograd.Call{
		{Op: autograd.Leaf, Handle: 4, Shape: []int{2}, Values: []float64{1, 2}, RequiresGrad: true},
		{Op: autograd.Leaf, Handle: 5, Shape: []int{2}, Values: []float64{3, 4}},
		{Op: autograd.Mul, Handle: 6, A: 4, B: 5},
		{Op: autograd.Exp, Handle: 7, A: 6},
		{Op: autograd.Sum, Handle: 8, A: 7},
		{Op: autograd.Backward, Target: 8, RetainGraph: true},
		{Op: autograd.End},
	}
	fails := func(p []autograd.Call) bool {
		exp := map[int]bool{}
		for _, c := range p {
			switch {
			case c.Op == autograd.Exp:
				exp[c.Handle] = true
			case c.Op == autograd.Sum && exp[c.A]:
				exp[c.Handle] = true
			case c.Op == autograd.Backward && exp[c.Target]:
				return true
			}
		}
		return false
	}
	for _, c := range autograd.Shrink(calls, fails) {
		fmt.Printf("%s handle=%d a=%d target=%d retain=%v\n", c.Op, c.Handle, c.A, c.Target, c.RetainGraph)
	}
	// Output:
	// leaf handle=1 a=0 target=0 retain=false
	// exp handle=2 a=1 target=0 retain=false
	// backward handle=0 a=0 target=2 retain=false
	// end handle=0 a=0 target=0 retain=false
}

// The kinds of in-process steps are operations of the one table, with
// the way a step makes them.
func ExampleKinds() {
	for _, name := range []string{"mul", "ckpt-mul", "mul_-nograd", "free_graph"} {
		k, _ := autograd.KindOf(name)
		kind := autograd.Kinds[k]
		row, _ := autograd.Lookup(kind.Op)
		fmt.Printf("%s: %s, checkpointed %v, no_grad %v, on the wire %v\n", kind.Name, kind.Op,
			kind.Mod&autograd.Checkpointed != 0, kind.Mod&autograd.NoGrad != 0, row.Where&autograd.Wire != 0)
	}
	// Output:
	// mul: mul, checkpointed false, no_grad false, on the wire true
	// ckpt-mul: mul, checkpointed true, no_grad false, on the wire true
	// mul_-nograd: mul_, checkpointed false, no_grad true, on the wire true
	// free_graph: drop, checkpointed false, no_grad false, on the wire true
}
