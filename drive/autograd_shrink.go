package drive

import "slices"

// shrinkTensorCalls shrinks calls (which end with end) while fails holds.
func shrinkTensorCalls(calls []TensorCall, fails func([]TensorCall) bool) []TensorCall {
	try := func(c []TensorCall) bool {
		if len(c) == 0 || c[len(c)-1].Op != TensorEnd {
			c = append(c, TensorCall{Op: TensorEnd})
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
				if !try(withoutCalls(calls, i, min(i+n, len(calls)-1))) {
					i += n
				}
			}
		}
		// A call that makes a tensor from others bypassed: the calls after
		// it use one of its operands instead.
		for i := 0; i < len(calls)-1; i++ {
			if c := calls[i]; c.Op.Makes() && c.Op != TensorLeaf {
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
	if !slices.EqualFunc(renumbered, calls, sameCall) {
		try(renumbered)
	}
	return calls
}

// withoutCalls returns calls without [i, j), and without every later call
// that uses a tensor one of those made.
func withoutCalls(calls []TensorCall, i, j int) []TensorCall {
	gone := map[int]bool{}
	out := make([]TensorCall, 0, len(calls))
	for k, c := range calls {
		if k >= i && k < j {
			if c.Op.Makes() {
				gone[c.Handle] = true
			}
			continue
		}
		if uses(c, gone) {
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
func bypass(calls []TensorCall, i, x int) []TensorCall {
	h := calls[i].Handle
	out := make([]TensorCall, 0, len(calls)-1)
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
func madeBefore(calls []TensorCall, i int) []int {
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
func retarget(calls []TensorCall, i, h int) ([]TensorCall, bool) {
	c := calls[i]
	f := tensorRows[c.Op].required
	switch {
	case f&tTarget != 0 && h < c.Target:
		c.Target = h
	case f&tA != 0 && f&tTarget == 0 && h < c.A:
		c.A = h
	default:
		return nil, false
	}
	out := slices.Clone(calls)
	out[i] = c
	return out, true
}

// uses reports whether c names a handle of set.
func uses(c TensorCall, set map[int]bool) bool {
	row := tensorRows[c.Op]
	f := row.required
	if row.optional != 0 && !c.ByScalar {
		f |= tB
	}
	return f&tA != 0 && set[c.A] || f&tB != 0 && set[c.B] || f&tTarget != 0 && set[c.Target]
}

// plainer returns simpler versions of c, one change each.
func plainer(c TensorCall) []TensorCall {
	var out []TensorCall
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
	if c.Op == TensorLeaf {
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
func renumber(calls []TensorCall) []TensorCall {
	m := map[int]int{}
	get := func(h int) int {
		if n, ok := m[h]; ok || h == 0 {
			return n
		}
		return h + 1000000 // a handle never made: keep it unknown
	}
	out := make([]TensorCall, len(calls))
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

func sameCall(a, b TensorCall) bool {
	return a.Op == b.Op && a.Handle == b.Handle && a.A == b.A && a.B == b.B && a.Target == b.Target &&
		a.NoGrad == b.NoGrad && a.RetainGraph == b.RetainGraph && a.RequiresGrad == b.RequiresGrad &&
		slices.Equal(a.Shape, b.Shape) && equalFloats(a.Values, b.Values)
}
