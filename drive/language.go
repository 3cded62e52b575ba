package drive

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// A language is a program language sent over the pipe, as the search
// and the shrinker see it: how its programs are generated, run and made
// smaller. Programs of layers 2 and 3 (flat programs, lowered to calls)
// and layer-5 autograd programs are two languages of one search loop
// (search) and one shrinker driver (shrink).
type language[P any] struct {
	// seedStream is the second word of the search's PCG, so that one seed
	// gives each language a stream of its own.
	seedStream uint64
	generate   func(rng *rand.Rand) P
	// stream runs the programs next gives, two in flight, as Stream does,
	// handing got each program as made and its run.
	stream func(next func() (P, bool), got func(made P, res *Result) bool) error
	// run runs one program and returns it as made.
	run func(p P) (made P, res *Result, err error)
	// cut returns p without the steps after the failing call, with false
	// when none would go.
	cut func(p P, call int) (P, bool)
	// passes shrinks p with fails judging each candidate; first is the
	// shrinker's first round (towards the same failure), not first the
	// round towards any failure of the fault.
	passes func(p P, fails func(P) (P, bool), first bool) P
	// size is p's length, steps or calls; keep notes p, as made, in f.
	size func(p P) int
	keep func(f *Finding, p P)
}

// search is Search's loop for any language: programs generated from
// opts.Seed, each checked as it comes, each failure shrunk (shrink) and
// run once more alone (reproduce).
func search[P any](r *Runner, opts Options, lang language[P]) ([]*Finding, int, error) {
	more := opts.More
	if more == nil {
		more = func(n int) bool { return n < 1000 }
	}
	rng := rand.New(rand.NewPCG(opts.Seed, lang.seedStream))
	start := time.Now()
	var found []*Finding
	generated, judged := 0, 0
	for {
		var failed *Result
		var failedP P
		err := lang.stream(func() (P, bool) {
			if !more(generated) {
				var none P
				return none, false
			}
			generated++
			return lang.generate(rng), true
		}, func(made P, res *Result) bool {
			judged++
			if res.Failure != nil {
				failed, failedP = res, made
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
		f, err := shrink(r, failedP, failed.Failure, opts, lang)
		if err != nil {
			return found, judged, err
		}
		if err := r.reproduce(f); err != nil {
			return found, judged, err
		}
		f.Seed, f.Index, f.Duration = opts.Seed, judged, took
		if opts.Found != nil {
			opts.Found(f) // the caller keeps what it wants: a long search holds none
		} else {
			found = append(found, f)
		}
		if !opts.Restart || !failed.Failure.Trouble() {
			return found, judged, nil
		}
		generated = judged // the program in flight behind the failure was not judged: run it again
		rng = rand.New(rand.NewPCG(opts.Seed, lang.seedStream))
		for range judged {
			lang.generate(rng)
		}
	}
}

// shrink is Shrink's driver for any language: the steps after the failing
// call go, then the language's passes run with each candidate judged on
// the driver (within opts.ShrinkRuns and opts.ShrinkTime), first towards
// a failure of the same kind at the same op, then, unless the driver
// broke, towards any failure of the runtime's (see anyFailure). The
// smallest is run once more for the finding.
func shrink[P any](r *Runner, p P, failure *Failure, opts Options, lang language[P]) (*Finding, error) {
	limit, until := opts.ShrinkRuns, opts.ShrinkTime
	if limit <= 0 {
		limit = 2000
	}
	if until <= 0 {
		until = 30 * time.Second
	}
	deadline := time.Now().Add(until)
	f := &Finding{Steps: lang.size(p)}
	lang.keep(f, p)
	var runErr error
	accept := sameFailure(failure)
	fails := func(c P) (P, bool) {
		if f.Shrinks >= limit || runErr != nil || time.Now().After(deadline) {
			return c, false
		}
		f.Shrinks++
		made, res, err := lang.run(c)
		if err != nil {
			runErr = err
			return c, false
		}
		return made, accept(res.Failure)
	}
	best := p
	restore := r.hangTimeout(failure)
	if c, ok := lang.cut(p, failure.Call); ok {
		if made, ok := fails(c); ok {
			best = made
		}
	}
	best = lang.passes(best, fails, true)
	if !failure.Trouble() { // on, towards the smallest failure of the fault, whatever its kind (see anyFailure)
		exact := accept
		accept = anyFailure
		if c := lang.passes(best, fails, false); lang.size(c) < lang.size(best) {
			best = c
		} else {
			accept = exact
		}
	}
	restore()
	if runErr != nil {
		return nil, fmt.Errorf("drive: shrinking: %w", runErr)
	}
	// Run the smallest once more for its result, or the original if that
	// no longer fails: a driver's runtime is deterministic in what the
	// protocol sees, or the finding says it is not.
	var res *Result
	for _, c := range []P{best, p} {
		made, got, err := lang.run(c)
		if err != nil {
			return nil, fmt.Errorf("drive: shrinking: %w", err)
		}
		lang.keep(f, made)
		f.Result, res = got, got
		if accept(res.Failure) {
			firstSeen(res.Failure, failure)
			return f, nil
		}
	}
	failure.Message += " (the driver did not fail so again when the program was run again: it is not deterministic)"
	res.Failure = failure
	return f, nil
}
