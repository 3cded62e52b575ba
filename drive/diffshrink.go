package drive

import (
	"fmt"
	"time"
)

// shrink makes d's program smaller while both drivers still disagree on
// it the same way (its signature: the same field at a call of the same
// op), running each candidate on both. A candidate drops calls: first
// everything after the call they disagree at, then chunks of calls,
// halving, each with the calls that name a tensor a dropped call made;
// then it simplifies calls (no no_grad, no retain_graph). The handles of
// what remains are numbered anew, from 1 in the order made.
func (p *pair) shrink(d *Disagreement) (*Disagreement, error) {
	deadline := time.Now().Add(p.opts.ShrinkTime)
	runs := 0
	var runErr error
	best := d
	try := func(calls []TensorCall) bool {
		if runErr != nil || runs >= p.opts.ShrinkRuns || time.Now().After(deadline) {
			return false
		}
		runs++
		ra, rb, err := p.run(calls)
		if err != nil {
			runErr = err
			return false
		}
		c := p.judge(calls, ra, rb)
		if c == nil || c.sig != d.sig {
			return false
		}
		best = c
		return true
	}
	body := func() []TensorCall { return best.Calls[:len(best.Calls)-1] } // without end
	withEnd := func(calls []TensorCall) []TensorCall {
		return append(calls, TensorCall{Op: TensorEnd})
	}
	if best.Call+1 < len(body()) {
		try(withEnd(cloneCalls(body()[:best.Call+1])))
	}
	for progress := true; progress; {
		progress = false
		for n := max(len(body())/2, 1); n >= 1; n /= 2 {
			for i := len(body()) - n; i >= 0; i-- {
				if i+n > len(body()) {
					continue
				}
				if c := without(body(), i, n); len(c) < len(body()) && try(withEnd(c)) {
					progress = true
				}
			}
		}
		for i := range body() {
			for _, c := range simpler(body(), i) {
				if try(withEnd(c)) {
					progress = true
				}
			}
		}
	}
	if runErr != nil {
		return nil, fmt.Errorf("drive: shrinking a disagreement: %w", runErr)
	}
	if renumbered := renumber(best.Calls); !try(renumbered) && runErr != nil {
		return nil, fmt.Errorf("drive: shrinking a disagreement: %w", runErr)
	}
	best.Seed, best.Index, best.Steps, best.Shrinks = d.Seed, d.Index, d.Steps, runs
	return best, nil
}

// handlesOf returns the handles call c names (operands, target).
func handlesOf(c *TensorCall) []int {
	row := tensorRows[c.Op]
	f := row.required
	if row.optional != 0 && !c.ByScalar {
		f |= tB
	}
	var hs []int
	if f&tA != 0 {
		hs = append(hs, c.A)
	}
	if f&tB != 0 {
		hs = append(hs, c.B)
	}
	if f&tTarget != 0 {
		hs = append(hs, c.Target)
	}
	return hs
}

// without returns calls without calls[i:i+n] and without every later
// call that names a tensor a dropped call made.
func without(calls []TensorCall, i, n int) []TensorCall {
	gone := map[int]bool{}
	out := make([]TensorCall, 0, len(calls)-n)
	for k := range calls {
		c := &calls[k]
		drop := k >= i && k < i+n
		for _, h := range handlesOf(c) {
			drop = drop || gone[h]
		}
		if drop {
			if c.Op.Makes() {
				gone[c.Handle] = true
			}
			continue
		}
		out = append(out, cloneCall(c))
	}
	return out
}

// simpler returns the simplifications of calls[i]: without no_grad,
// without retain_graph.
func simpler(calls []TensorCall, i int) [][]TensorCall {
	var out [][]TensorCall
	if calls[i].NoGrad {
		c := cloneCalls(calls)
		c[i].NoGrad = false
		out = append(out, c)
	}
	if calls[i].RetainGraph {
		c := cloneCalls(calls)
		c[i].RetainGraph = false
		out = append(out, c)
	}
	return out
}

// renumber numbers the handles of calls anew, from 1 in the order made.
func renumber(calls []TensorCall) []TensorCall {
	to := map[int]int{}
	out := cloneCalls(calls)
	for k := range out {
		c := &out[k]
		row := tensorRows[c.Op]
		f := row.required
		if row.optional != 0 && !c.ByScalar {
			f |= tB
		}
		if f&tA != 0 {
			c.A = to[c.A]
		}
		if f&tB != 0 {
			c.B = to[c.B]
		}
		if f&tTarget != 0 {
			c.Target = to[c.Target]
		}
		if c.Op.Makes() {
			to[c.Handle] = len(to) + 1
			c.Handle = to[c.Handle]
		}
	}
	return out
}

func cloneCall(c *TensorCall) TensorCall {
	d := *c
	d.Shape = append([]int(nil), c.Shape...)
	d.Values = append([]float64(nil), c.Values...)
	if c.Shape != nil && d.Shape == nil {
		d.Shape = []int{}
	}
	return d
}

func cloneCalls(calls []TensorCall) []TensorCall {
	out := make([]TensorCall, len(calls))
	for i := range calls {
		out[i] = cloneCall(&calls[i])
	}
	return out
}
