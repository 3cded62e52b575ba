package drive

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// A programLanguage is a program language sent over the pipe, as the
// search and the shrinker see it: how its programs are generated, run and
// made smaller. Programs of layers 2 and 3 (flat programs, lowered to
// calls), layer-5 autograd programs and tfjs programs are languages of one
// search loop (search) and one shrinker driver (shrink); P is a program, R
// its run.
type programLanguage[P any, R run] struct {
	// seedStream is the second word of the search's PCG, so that one seed
	// gives each language a stream of its own; generate makes the next
	// program from it. Where nth is set, program k (from 1) of a search is
	// nth(seed, k) instead, a generator of its own for each (tfjs's, so
	// that parallel searches run the programs one search does).
	seedStream uint64
	generate   func(rng *rand.Rand) P
	nth        func(seed uint64, k int) P
	// stream runs the programs next gives, two in flight, as Stream does,
	// handing got each program as made and its run.
	stream func(next func() (P, bool), got func(made P, res R) bool) error
	// run runs one program and returns it as made.
	run func(p P) (made P, res R, err error)
	// cut returns p without the steps after the failing call, with false
	// when none would go.
	cut func(p P, call int) (P, bool)
	// passes shrinks p with fails judging each candidate; first is the
	// shrinker's first round (towards the same failure), not first the
	// round towards any failure of the fault (a language that has no such
	// round returns p).
	passes func(p P, fails func(P) (P, bool), first bool) P
	// size is p's length, steps or calls; keep notes p, as made, in f (its
	// run goes in f by R's keep).
	size func(p P) int
	keep func(f *Finding, p P)
	// unreproduced: the search does not run a finding once more alone in
	// a driver started for it (Runner.reproduce), as tfjs searches never
	// did.
	unreproduced bool
}

// A language is a program language whose runs are Results: flat programs
// and layer-5 programs.
type language[P any] = programLanguage[P, *Result]

// A run is a program's run in some language: *Result, or *TfjsResult for
// tfjs programs. The search and the shrinker read and set its failure
// (failed) and note it in a finding (keep).
type run interface {
	failed() **Failure
	keep(f *Finding)
}

func (r *Result) failed() **Failure     { return &r.Failure }
func (r *Result) keep(f *Finding)       { f.Result = r }
func (r *TfjsResult) failed() **Failure { return &r.Failure }
func (r *TfjsResult) keep(f *Finding)   { f.tfjs = r }

// programs is the programs of a search of seed, one a call.
func (lang programLanguage[P, R]) programs(seed uint64) func() P {
	if lang.nth != nil {
		k := 0
		return func() P {
			k++
			return lang.nth(seed, k)
		}
	}
	rng := rand.New(rand.NewPCG(seed, lang.seedStream))
	return func() P { return lang.generate(rng) }
}

// search is Search's and SearchTfjs's loop for any language: programs
// generated from opts.Seed, each checked as it comes, each failure shrunk
// (shrink) and, unless the language's findings are unreproduced, run once
// more alone (reproduce).
func search[P any, R run](r *Runner, opts Options, lang programLanguage[P, R]) ([]*Finding, int, error) {
	more := opts.More
	if more == nil {
		more = func(n int) bool { return n < 1000 }
	}
	programs := lang.programs(opts.Seed)
	start := time.Now()
	var found []*Finding
	generated, judged := 0, 0
	for {
		var failed *Failure
		var failedP P
		err := lang.stream(func() (P, bool) {
			if !more(generated) {
				var none P
				return none, false
			}
			generated++
			return programs(), true
		}, func(made P, res R) bool {
			judged++
			if *res.failed() != nil {
				failed, failedP = *res.failed(), made
				return false
			}
			return true
		})
		if err != nil || failed == nil {
			return found, judged, err
		}
		took := time.Since(start)
		if opts.Shrinking != nil {
			opts.Shrinking(failed)
		}
		f, err := shrink(r, failedP, failed, opts, lang)
		if err != nil {
			return found, judged, err
		}
		if !lang.unreproduced {
			if err := r.reproduce(f); err != nil {
				return found, judged, err
			}
		}
		f.Seed, f.Index, f.Duration = opts.Seed, judged, took
		if opts.Found != nil {
			opts.Found(f) // the caller keeps what it wants: a long search holds none
		} else {
			found = append(found, f)
		}
		if !opts.Restart || !failed.Trouble() {
			return found, judged, nil
		}
		generated = judged // the program in flight behind the failure was not judged: run it again
		programs = lang.programs(opts.Seed)
		for range judged {
			programs()
		}
	}
}

// shrink is Shrink's driver for any language: the steps after the failing
// call go, then the language's passes run with each candidate judged on
// the driver (within opts.ShrinkRuns and opts.ShrinkTime), first towards
// a failure of the same kind at the same op, then, unless the driver
// broke, towards any failure of the runtime's (see anyFailure). The
// smallest is run once more for the finding.
//
// It is not properties/harness's Shrink, the in-process languages' driver:
// a run here goes over the pipe and can fail as a run (the driver does
// not start: the error ends the shrinking), costs a process's time (hence
// the budget of runs and time, and a hang shrunk at a shorter timeout),
// and is judged by drive's failure signature, then by anyFailure; the
// passes take a judge and go on from each smaller program they find, where
// harness's driver restarts from the first of a list of candidates.
func shrink[P any, R run](r *Runner, p P, failure *Failure, opts Options, lang programLanguage[P, R]) (*Finding, error) {
	limit, until := opts.ShrinkRuns, opts.ShrinkTime
	if limit <= 0 {
		limit = 2000
	}
	if until <= 0 {
		until = 30 * time.Second
	}
	deadline := time.Now().Add(until)
	f := &Finding{Steps: lang.size(p)}
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
		return made, accept(*res.failed())
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
	var res R
	for _, c := range []P{best, p} {
		made, got, err := lang.run(c)
		if err != nil {
			return nil, fmt.Errorf("drive: shrinking: %w", err)
		}
		lang.keep(f, made)
		got.keep(f)
		res = got
		if accept(*res.failed()) {
			firstSeen(*res.failed(), failure)
			return f, nil
		}
	}
	failure.Message += " (the driver did not fail so again when the program was run again: it is not deterministic)"
	*res.failed() = failure
	return f, nil
}
