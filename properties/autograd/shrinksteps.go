package autograd

import "slices"

// ShrinkSteps returns the smallest in-process program it finds that
// still fails, starting from steps, whose failing run had the pool
// lengths sizes before each step (see repoint). fails runs a candidate:
// it reports whether the candidate fails the same way and, if so, the
// pool lengths of its run. Steps go one at a time, from the last (a step
// that made a tensor first with the later operands re-pointed at the
// tensors they named, then as they were), and operands are lowered to
// every smaller index, until nothing changes.
func ShrinkSteps(steps []Step, sizes []int, fails func([]Step) ([]int, bool)) []Step {
	try := func(q []Step) bool {
		got, ok := fails(q)
		if ok {
			steps, sizes = q, got
		}
		return ok
	}
	for changed := true; changed; {
		changed = false
		for i := len(steps) - 1; i >= 0; i-- {
			// Dropping a step that made a tensor moves every later tensor
			// down the pool: try the later operands re-pointed at the
			// tensors they named, then as they were.
			for _, q := range [][]Step{repoint(steps, i, sizes), slices.Delete(slices.Clone(steps), i, i+1)} {
				if q != nil && try(q) {
					changed = true
					break
				}
			}
		}
		// An operand names a tensor by its index in the pool, so a step
		// dropped above may leave one pointing further than it needs:
		// try every smaller index.
		for i := range steps {
			for _, op := range []func(*Step) *int{func(s *Step) *int { return &s.A }, func(s *Step) *int { return &s.B }} {
				for v := 0; v < *op(&steps[i]); v++ {
					q := slices.Clone(steps)
					*op(&q[i]) = v
					if try(q) {
						changed = true
						break
					}
				}
			}
		}
	}
	return steps
}

// repoint returns steps without step i, its later operands re-pointed at
// the tensors they named in the run whose pool lengths before each step
// were sizes: a tensor after the ones step i made moves down by their
// number. It returns nil when step i made no tensor, or sizes does not
// say (the run stopped before it).
func repoint(steps []Step, i int, sizes []int) []Step {
	if i+1 >= len(sizes) || sizes[i+1] == sizes[i] {
		return nil
	}
	from, made := sizes[i], sizes[i+1]-sizes[i]
	q := slices.Delete(slices.Clone(steps), i, i+1)
	for j := i + 1; j < len(steps) && j < len(sizes); j++ {
		s := &q[j-1]
		for _, o := range []*int{&s.A, &s.B} {
			n := sizes[j]
			if n == 0 {
				continue
			}
			switch k := PoolIndex(*o, n); {
			case *o < newestFrom && k >= from+made:
				*o = k - made
			case *o >= newestFrom && k < from:
				// Counted from the newest, it is made tensors nearer.
				*o = Newest(n - 1 - k - made)
			}
		}
	}
	return q
}

// CheckpointPrelude is a checkpointed program's start written as steps
// of a plain one, only y = x*c checkpointed: x, a leaf that requires grad
// (an even A), c, one that does not, and y. A shrinker tries a
// checkpointed failure as a plain program that starts so, so that what
// the failure needs is all in steps.
func CheckpointPrelude() []Step {
	return []Step{{Kind: kind("leaf"), A: 0, F: 1.5}, {Kind: kind("leaf"), A: 1, F: 0.5}, {Kind: kind("ckpt-mul"), A: 0, B: 1}}
}
