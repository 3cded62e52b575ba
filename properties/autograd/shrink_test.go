package autograd

import (
	"math/rand/v2"
	"testing"
)

// TestShrink: the shrinker keeps what a failure needs, drops a making
// call with every call that uses it, and numbers handles again.
func TestShrink(t *testing.T) {
	// A failure: some backward of a sum. The smallest program has a leaf,
	// a sum of it and the backward.
	fails := func(c []Call) bool {
		made := map[int]Op{}
		for _, x := range c {
			if x.Op.Makes() {
				made[x.Handle] = x.Op
			}
			if x.Op == Backward && made[x.Target] == Sum {
				return true
			}
		}
		return false
	}
	rng := rand.New(rand.NewPCG(11, 3))
	p := Generate(rng)
	for !fails(p) || len(p) < 20 {
		p = Generate(rng)
	}
	got := Shrink(p, fails)
	if len(got) > 4 || !fails(got) || got[len(got)-1].Op != End {
		t.Fatalf("shrunk %d calls to %+v", len(p), got)
	}
	if got[0].Op.Makes() && got[0].Handle != 1 {
		t.Errorf("handles not numbered again: %+v", got)
	}
}

// TestWithout: a making call goes with every call that uses what it made.
func TestWithout(t *testing.T) {
	calls := []Call{
		{Op: Leaf, Handle: 1, Shape: []int{}, Values: []float64{1}},
		{Op: Exp, Handle: 2, A: 1},
		{Op: Sum, Handle: 3, A: 2},
		{Op: MulInPlace, Target: 1, ByScalar: true, Scalar: 2},
		{Op: End},
	}
	got := Without(calls, 1, 2)
	if len(got) != 3 || got[0].Op != Leaf || got[1].Op != MulInPlace || got[2].Op != End {
		t.Errorf("Without exp: %+v, want leaf, mul_, end", got)
	}
}
