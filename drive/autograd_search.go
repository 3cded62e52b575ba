package drive

import "slices"

// RunTensor runs a layer-5 program on the driver (see Driver.RunTensor),
// starting it again first if the last run broke it.
func (r *Runner) RunTensor(calls []TensorCall) (*Result, error) {
	if err := r.ensure(); err != nil {
		return nil, err
	}
	res, err := r.d.RunTensor(calls)
	return r.retire(res, err)
}

// StreamTensor runs the layer-5 programs next gives and hands each one's
// run to got, in order, as Stream does for programs of layers 2 and 3:
// two programs in flight, a program whose run broke the driver while the
// next was in flight run again alone.
func (r *Runner) StreamTensor(next func() ([]TensorCall, bool), got func(res *Result) bool) error {
	return stream(r, next,
		func(calls []TensorCall) (*batch, error) { return r.d.sendTensor(calls) },
		r.RunTensor,
		func(_ []TensorCall, res *Result) bool { return got(res) })
}

// tensorSeedStream is the second word of the PCG of layer-5 searches, so
// that a seed's layer-5 programs are not its layer-2 programs' stream.
const tensorSeedStream = 0x746c35

// searchTensor is Search for a driver of layer-5 programs: programs of
// GenerateTensorProgram, each checked as it comes, each failure shrunk by
// ShrinkTensor.
func (r *Runner) searchTensor(opts Options) ([]*Finding, int, error) {
	return search(r, opts, r.tensorLanguage())
}

// ShrinkTensor returns the smallest layer-5 program it finds that fails
// on the driver the way calls did with failure (the same kind, at the same
// op): first the calls after the failing one go, then runs of calls, ever
// shorter (a call that makes a tensor goes with every call that uses it),
// then flags (no_grad, retain_graph, requires_grad) and values are made
// plainer; the handles are numbered again in the order made.
func (r *Runner) ShrinkTensor(calls []TensorCall, failure *Failure, opts Options) (*Finding, error) {
	return shrink(r, calls, failure, opts, r.tensorLanguage())
}

// tensorLanguage is layer-5 programs as searchTensor and ShrinkTensor
// send them; a finding's program is its Result's TensorCalls.
func (r *Runner) tensorLanguage() language[[]TensorCall] {
	return language[[]TensorCall]{
		seedStream: tensorSeedStream,
		generate:   GenerateTensorProgram,
		stream: func(next func() ([]TensorCall, bool), got func([]TensorCall, *Result) bool) error {
			return r.StreamTensor(next, func(res *Result) bool { return got(res.TensorCalls, res) })
		},
		run: func(c []TensorCall) ([]TensorCall, *Result, error) {
			res, err := r.RunTensor(c)
			return c, res, err
		},
		cut: func(calls []TensorCall, call int) ([]TensorCall, bool) {
			if call+1 < len(calls)-1 {
				return append(slices.Clone(calls[:call+1]), TensorCall{Op: TensorEnd}), true
			}
			return calls, false
		},
		passes: func(c []TensorCall, fails func([]TensorCall) ([]TensorCall, bool), _ bool) []TensorCall {
			return shrinkTensorCalls(c, func(c []TensorCall) bool {
				_, ok := fails(c)
				return ok
			})
		},
		size: func(c []TensorCall) int { return len(c) },
		keep: func(*Finding, []TensorCall) {},
	}
}
