package drive

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// RunTensor runs a layer-5 program on the driver (see Driver.RunTensor),
// starting it again first if the last run broke it.
func (r *Runner) RunTensor(calls []TensorCall) (*Result, error) {
	if err := r.ensure(); err != nil {
		return nil, err
	}
	return r.d.RunTensor(calls)
}

// StreamTensor runs the layer-5 programs next gives and hands each one's
// run to got, in order, as Stream does for programs of layers 2 and 3:
// two programs in flight, a program whose run broke the driver while the
// next was in flight run again alone.
func (r *Runner) StreamTensor(next func() ([]TensorCall, bool), got func(res *Result) bool) error {
	type flight struct {
		calls []TensorCall
		b     *batch
	}
	send := func(f *flight) error {
		if err := r.ensure(); err != nil {
			return err
		}
		var err error
		f.b, err = r.d.sendTensor(f.calls)
		return err
	}
	var prev *flight
	for {
		var cur *flight
		if calls, ok := next(); ok {
			cur = &flight{calls: calls}
			if prev == nil || r.d.broken == nil {
				if err := send(cur); err != nil {
					return err
				}
			}
		}
		if prev != nil {
			res := r.d.receive(prev.b)
			if res.Failure != nil && res.Failure.Trouble() && cur != nil && cur.b != nil {
				cur.b = nil // the crash may be the next one's: run this one alone
				var err error
				if res, err = r.RunTensor(prev.calls); err != nil {
					return err
				}
			}
			if !got(res) {
				if cur != nil && cur.b != nil && r.d.broken == nil {
					r.d.receive(cur.b) // drain: its answers are not wanted
				}
				return nil
			}
			if cur != nil && (cur.b == nil || r.d.broken != nil) {
				if err := send(cur); err != nil {
					return err
				}
			}
		}
		if cur == nil {
			return nil
		}
		prev = cur
	}
}

// tensorSeedStream is the second word of the PCG of layer-5 searches, so
// that a seed's layer-5 programs are not its layer-2 programs' stream.
const tensorSeedStream = 0x746c35

// searchTensor is Search for a driver of layer-5 programs: programs of
// GenerateTensorProgram, each checked as it comes, each failure shrunk by
// ShrinkTensor.
func (r *Runner) searchTensor(opts Options) ([]*Finding, int, error) {
	more := opts.More
	if more == nil {
		more = func(n int) bool { return n < 1000 }
	}
	rng := rand.New(rand.NewPCG(opts.Seed, tensorSeedStream))
	start := time.Now()
	var found []*Finding
	generated, judged := 0, 0
	for {
		var failed *Result
		err := r.StreamTensor(func() ([]TensorCall, bool) {
			if !more(generated) {
				return nil, false
			}
			generated++
			return GenerateTensorProgram(rng), true
		}, func(res *Result) bool {
			judged++
			if res.Failure != nil {
				failed = res
				return false
			}
			return true
		})
		if err != nil || failed == nil {
			return found, judged, err
		}
		took := time.Since(start)
		f, err := r.ShrinkTensor(failed.TensorCalls, failed.Failure, opts)
		if err != nil {
			return found, judged, err
		}
		f.Seed, f.Index, f.Duration = opts.Seed, judged, took
		if opts.Found != nil {
			opts.Found(f)
		} else {
			found = append(found, f)
		}
		if !opts.Restart || !failed.Failure.Trouble() {
			return found, judged, nil
		}
		generated = judged
		rng = rand.New(rand.NewPCG(opts.Seed, tensorSeedStream))
		for range judged {
			GenerateTensorProgram(rng)
		}
	}
}

// ShrinkTensor returns the smallest layer-5 program it finds that fails
// on the driver the way calls did with failure (the same kind, at the same
// op): first the calls after the failing one go, then runs of calls, ever
// shorter (a call that makes a tensor goes with every call that uses it),
// then flags (no_grad, retain_graph, requires_grad) and values are made
// plainer; the handles are numbered again in the order made.
func (r *Runner) ShrinkTensor(calls []TensorCall, failure *Failure, opts Options) (*Finding, error) {
	limit, until := opts.ShrinkRuns, opts.ShrinkTime
	if limit <= 0 {
		limit = 2000
	}
	if until <= 0 {
		until = 30 * time.Second
	}
	deadline := time.Now().Add(until)
	f := &Finding{Steps: len(calls)}
	var runErr error
	fails := func(c []TensorCall) bool {
		if f.Shrinks >= limit || runErr != nil || time.Now().After(deadline) {
			return false
		}
		f.Shrinks++
		res, err := r.RunTensor(c)
		if err != nil {
			runErr = err
			return false
		}
		return res.Failure != nil && res.Failure.sig == failure.sig
	}
	best := calls
	if failure.Call+1 < len(calls)-1 {
		c := append(slices.Clone(calls[:failure.Call+1]), TensorCall{Op: TensorEnd})
		if fails(c) {
			best = c
		}
	}
	best = shrinkTensorCalls(best, fails)
	if runErr != nil {
		return nil, fmt.Errorf("drive: shrinking: %w", runErr)
	}
	for _, c := range [][]TensorCall{best, calls} {
		res, err := r.RunTensor(c)
		if err != nil {
			return nil, fmt.Errorf("drive: shrinking: %w", err)
		}
		if res.Failure != nil && res.Failure.sig == failure.sig {
			f.Result = res
			return f, nil
		}
		f.Result = res
	}
	failure.Message += " (the driver did not fail so again when the program was run again: it is not deterministic)"
	f.Result.Failure = failure
	return f, nil
}

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
