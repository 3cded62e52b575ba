package autograd

import (
	"math"
	"slices"
)

// Shrink returns the smallest program it finds that fails holds for,
// starting from calls (which end with end, as every candidate it tries
// does): runs of calls go, ever shorter (a call that makes a tensor goes
// with every call that uses it); a call that makes a tensor from others
// is bypassed, the calls after it using an operand instead; a target or
// operand is pointed at an older tensor; flags (no_grad, retain_graph,
// requires_grad) and values are made plainer, one field at a time; and
// the handles are numbered again in the order made. fails is called once
// per candidate, so that it may count runs and stop a search that runs
// too long by answering false.
func Shrink(calls []Call, fails func([]Call) bool) []Call {
	try := func(c []Call) bool {
		if len(c) == 0 || c[len(c)-1].Op != End {
			c = append(c, Call{Op: End})
		}
		if fails(c) {
			calls = c
			return true
		}
		return false
	}
	for progress := true; progress; {
		before := len(calls)
		progress = false
		// Runs of calls, halving the run's length down to one call.
		for n := max((len(calls)-1)/2, 1); n >= 1; n /= 2 {
			for i := 0; i < len(calls)-1; {
				if !try(Without(calls, i, min(i+n, len(calls)-1))) {
					i += n
				}
			}
		}
		// A call that makes a tensor from others bypassed: the calls after
		// it use one of its operands instead.
		for i := 0; i < len(calls)-1; i++ {
			if c := calls[i]; c.Op.Makes() && c.Op != Leaf {
				for _, x := range []int{c.A, c.B} {
					if x != 0 && try(bypass(calls, i, x)) {
						progress = true
						i--
						break
					}
				}
			}
		}
		// A call's target or operand made another tensor made before,
		// which may let the calls that made this one go.
		for i := 0; i < len(calls)-1 && len(calls) < 16; i++ {
			for _, h := range madeBefore(calls, i) {
				if retargeted, ok := retarget(calls, i, h); ok && try(retargeted) {
					progress = true
					break
				}
			}
		}
		// Plainer calls, one field at a time.
		for i := 0; i < len(calls)-1; i++ {
			for _, plain := range plainer(calls[i]) {
				c := slices.Clone(calls)
				c[i] = plain
				try(c)
			}
		}
		progress = progress || len(calls) < before
	}
	renumbered := renumber(calls)
	if !slices.EqualFunc(renumbered, calls, SameCall) {
		try(renumbered)
	}
	return calls
}

// Without returns calls without [i, j), and without every later call
// that uses a tensor one of those made.
func Without(calls []Call, i, j int) []Call {
	gone := map[int]bool{}
	out := make([]Call, 0, len(calls))
	for k, c := range calls {
		if k >= i && k < j {
			if c.Op.Makes() {
				gone[c.Handle] = true
			}
			continue
		}
		if c.Uses(gone) {
			if c.Op.Makes() {
				gone[c.Handle] = true
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// bypass returns calls without call i, its handle named x in the calls
// after it.
func bypass(calls []Call, i, x int) []Call {
	h := calls[i].Handle
	out := make([]Call, 0, len(calls)-1)
	out = append(out, calls[:i]...)
	for _, c := range calls[i+1:] {
		if c.A == h {
			c.A = x
		}
		if c.B == h {
			c.B = x
		}
		if c.Target == h {
			c.Target = x
		}
		out = append(out, c)
	}
	return out
}

// madeBefore returns the handles the calls before i make, newest first.
func madeBefore(calls []Call, i int) []int {
	var hs []int
	for k := i - 1; k >= 0; k-- {
		if calls[k].Op.Makes() {
			hs = append(hs, calls[k].Handle)
		}
	}
	return hs
}

// retarget returns calls with call i's target (or first operand) h, and
// whether that is a change to an older tensor (a smaller handle: handles
// grow in the order made), so that retargeting ends.
func retarget(calls []Call, i, h int) ([]Call, bool) {
	c := calls[i]
	f, _ := c.Op.Fields()
	switch {
	case f&FTarget != 0 && h < c.Target:
		c.Target = h
	case f&FA != 0 && f&FTarget == 0 && h < c.A:
		c.A = h
	default:
		return nil, false
	}
	out := slices.Clone(calls)
	out[i] = c
	return out, true
}

// plainer returns simpler versions of c, one change each.
func plainer(c Call) []Call {
	var out []Call
	if c.NoGrad {
		d := c
		d.NoGrad = false
		out = append(out, d)
	}
	if c.RetainGraph {
		d := c
		d.RetainGraph = false
		out = append(out, d)
	}
	if c.Op == Leaf {
		if !c.RequiresGrad {
			d := c
			d.RequiresGrad = true
			out = append(out, d)
		}
		if slices.ContainsFunc(c.Values, func(v float64) bool { return v != 1 }) {
			d := c
			d.Values = slices.Repeat([]float64{1}, len(c.Values))
			out = append(out, d)
		}
	}
	return out
}

// renumber gives the handles 1, 2, 3, ... in the order the calls make
// them.
func renumber(calls []Call) []Call {
	m := map[int]int{}
	get := func(h int) int {
		if n, ok := m[h]; ok || h == 0 {
			return n
		}
		return h + 1000000 // a handle never made: keep it unknown
	}
	out := make([]Call, len(calls))
	for i, c := range calls {
		d := c
		d.A, d.B, d.Target = get(c.A), get(c.B), get(c.Target)
		if c.Op.Makes() {
			m[c.Handle] = len(m) + 1
			d.Handle = m[c.Handle]
		}
		out[i] = d
	}
	return out
}

// SameCall reports whether a and b are the same call, as far as
// shrinking changes calls.
func SameCall(a, b Call) bool {
	return a.Op == b.Op && a.Handle == b.Handle && a.A == b.A && a.B == b.B && a.Target == b.Target &&
		a.NoGrad == b.NoGrad && a.RetainGraph == b.RetainGraph && a.RequiresGrad == b.RequiresGrad &&
		slices.Equal(a.Shape, b.Shape) && slices.EqualFunc(a.Values, b.Values, sameFloat)
}

// sameFloat reports whether x and y are the same number, NaN the same as NaN.
func sameFloat(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
