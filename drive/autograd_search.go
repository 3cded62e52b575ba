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
		if opts.Shrinking != nil {
			opts.Shrinking(failed.Failure)
		}
		f, err := r.ShrinkTensor(failed.TensorCalls, failed.Failure, opts)
		if err != nil {
			return found, judged, err
		}
		if err := r.reproduce(f); err != nil {
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
	accept := sameFailure(failure)
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
		return accept(res.Failure)
	}
	best := calls
	restore := r.hangTimeout(failure)
	if failure.Call+1 < len(calls)-1 {
		c := append(slices.Clone(calls[:failure.Call+1]), TensorCall{Op: TensorEnd})
		if fails(c) {
			best = c
		}
	}
	best = shrinkTensorCalls(best, fails)
	if !failure.Trouble() { // on, towards the smallest failure of any kind (see anyFailure)
		exact := accept
		accept = anyFailure
		if c := shrinkTensorCalls(best, fails); len(c) < len(best) {
			best = c
		} else {
			accept = exact
		}
	}
	restore()
	if runErr != nil {
		return nil, fmt.Errorf("drive: shrinking: %w", runErr)
	}
	for _, c := range [][]TensorCall{best, calls} {
		res, err := r.RunTensor(c)
		if err != nil {
			return nil, fmt.Errorf("drive: shrinking: %w", err)
		}
		if accept(res.Failure) {
			firstSeen(res.Failure, failure)
			f.Result = res
			return f, nil
		}
		f.Result = res
	}
	failure.Message += " (the driver did not fail so again when the program was run again: it is not deterministic)"
	f.Result.Failure = failure
	return f, nil
}
