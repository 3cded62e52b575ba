package drive

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tlcheck/tlcheck/properties"
	"github.com/tlcheck/tlcheck/traces"
)

// Runner runs programs on a driver, starting it when it is needed: first,
// and again after a run that broke it (a crash, a hang, output that is
// not the protocol), so that shrinking such a failure can run the
// candidates that crash it. Close ends the driver.
type Runner struct {
	cfg    Config
	d      *Driver
	hello  Hello
	offers map[traces.Op]bool
	starts int
}

// NewRunner starts the driver and returns a Runner over it.
func NewRunner(cfg Config) (*Runner, error) {
	r := &Runner{cfg: cfg}
	if err := r.ensure(); err != nil {
		return nil, err
	}
	r.hello, r.offers = r.d.Hello(), r.d.Hello().offers()
	return r, nil
}

func (r *Runner) ensure() error {
	if r.d != nil && r.d.broken == nil {
		return nil
	}
	if r.d != nil {
		r.d.kill()
	}
	d, err := Start(r.cfg)
	if err != nil {
		r.d = nil
		return err
	}
	r.d = d
	r.starts++
	return nil
}

// Hello returns the driver's hello.
func (r *Runner) Hello() Hello { return r.hello }

// Starts returns how many times the driver was started.
func (r *Runner) Starts() int { return r.starts }

// Close ends the driver; a driver that wrote anything after its last
// answer, or exited with a failure, is an error (a *Trouble).
func (r *Runner) Close() error {
	if r.d == nil {
		return nil
	}
	d := r.d
	r.d = nil
	return d.Close()
}

// Run runs calls on the driver (see Driver.Run), starting it again first
// if the last run broke it. A driver that cannot be started again is an
// error.
func (r *Runner) Run(calls []Call) (*Result, error) {
	if err := r.ensure(); err != nil {
		return nil, err
	}
	return r.d.Run(calls)
}

// RunProgram lowers p to calls the driver takes (see Lower) and runs them.
// It returns p as run, its refs canonical.
func (r *Runner) RunProgram(p properties.Program) (properties.Program, *Result, error) {
	made, calls := Lower(p, r.offers)
	res, err := r.Run(calls)
	return made, res, err
}

// Finding is a failing program, shrunk, with its run: the calls, the
// driver's answers, the trace its runtime wrote and the failure.
type Finding struct {
	Program  properties.Program // the shrunk program, as generated (empty for a layer-5 program: see Result.TensorCalls)
	Result   *Result            // its run on the driver
	Seed     uint64             // the seed of the search that found it
	Index    int                // the failing program's number in that search, from 1
	Steps    int                // its steps before shrinking
	Shrinks  int                // the runs shrinking made
	Duration time.Duration      // from the search's start to the finding, shrinking not included
}

// Failure returns the shrunk run's failure.
func (f *Finding) Failure() *Failure { return f.Result.Failure }

// Options steer Search.
type Options struct {
	Seed uint64
	// More says whether to run another program after n; nil runs 1000.
	More func(n int) bool
	// Restart: after a finding in which the driver crashed, hung or broke
	// the protocol, start it again and search on; without it the search
	// stops at the first finding of any kind.
	Restart bool
	// ShrinkRuns bounds the runs that shrinking one failure may make
	// (default 2000); ShrinkTime bounds its time (default 30s).
	ShrinkRuns int
	ShrinkTime time.Duration
	// Found, if set, is handed each finding as it is made, and Search
	// keeps none: a long search with Restart holds no more than one.
	Found func(*Finding)
}

// Stream runs the programs next gives, each lowered (see Lower) and run
// on the driver, and hands each one's run to got, in order, until next
// says there are no more or got returns false. It keeps two programs in
// flight: the next is lowered and sent while the driver answers the one
// before, so that the harness and the driver work at once and the pipe's
// round trip is paid once per program at most. A program whose run broke
// the driver while the next was in flight is run again alone, on the
// driver started again, so that a crash is blamed on the program that
// caused it; a program whose run broke the driver is handed to got like
// any other, and if got goes on, the program after it is sent again.
func (r *Runner) Stream(next func() (properties.Program, bool), got func(made properties.Program, res *Result) bool) error {
	type lowered struct {
		made  properties.Program
		calls []Call
	}
	return stream(r, func() (lowered, bool) {
		p, ok := next()
		if !ok {
			return lowered{}, false
		}
		made, calls := Lower(p, r.offers)
		return lowered{made, calls}, true
	},
		func(l lowered) (*batch, error) { return r.d.send(l.calls) },
		func(l lowered) (*Result, error) { return r.Run(l.calls) },
		func(l lowered, res *Result) bool { return got(l.made, res) })
}

// stream is Stream's and StreamTensor's loop over programs of any layer:
// send writes a program to the driver (after ensure has started it),
// alone runs one by itself, got takes each run in order.
func stream[P any](r *Runner, next func() (P, bool), send func(P) (*batch, error), alone func(P) (*Result, error), got func(P, *Result) bool) error {
	type flight struct {
		p P
		b *batch
	}
	start := func(f *flight) error {
		if err := r.ensure(); err != nil {
			return err
		}
		var err error
		f.b, err = send(f.p)
		return err
	}
	var prev *flight
	for {
		var cur *flight
		if p, ok := next(); ok {
			cur = &flight{p: p}
			if prev == nil || r.d.broken == nil {
				if err := start(cur); err != nil {
					return err
				}
			}
		}
		if prev != nil {
			res := r.d.receive(prev.b)
			if res.Failure != nil && res.Failure.Trouble() && cur != nil && cur.b != nil {
				// The driver broke with the next program sent too: the
				// crash may be the next one's (a driver may not have
				// flushed the answers before it). Run this one alone.
				cur.b = nil
				var err error
				if res, err = alone(prev.p); err != nil {
					return err
				}
			}
			if !got(prev.p, res) {
				if cur != nil && cur.b != nil && r.d.broken == nil {
					r.d.receive(cur.b) // drain: its answers are not wanted
				}
				return nil
			}
			if cur != nil && (cur.b == nil || r.d.broken != nil) { // sent to a driver that broke
				if err := start(cur); err != nil {
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

// Search runs programs generated from opts.Seed on the driver, each
// checked against the model, and shrinks each failure on the driver. It
// returns the findings (at most one unless opts.Restart; none if
// opts.Found takes them) and how many programs ran. The same seed gives the same programs.
//
// A driver of layer-5 programs only (its hello lists 5 and not 2) is sent
// programs of GenerateTensorProgram instead, shrunk by ShrinkTensor; its
// findings' programs are their Result's TensorCalls.
func (r *Runner) Search(opts Options) ([]*Finding, int, error) {
	if r.hello.Tfjs() {
		return nil, 0, errors.New("drive: the driver takes tfjs programs: search it with SearchTfjs")
	}
	if r.hello.Autograd() && !slices.Contains(r.hello.Layers, 2) {
		return r.searchTensor(opts)
	}
	more := opts.More
	if more == nil {
		more = func(n int) bool { return n < 1000 }
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x746c636865636b)) // as properties.Search
	start := time.Now()
	var found []*Finding
	generated, judged := 0, 0
	for {
		var failed *Result
		var failedP properties.Program
		err := r.Stream(func() (properties.Program, bool) {
			if !more(generated) {
				return properties.Program{}, false
			}
			generated++
			return properties.Generate(rng), true
		}, func(made properties.Program, res *Result) bool {
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
		f, err := r.Shrink(failedP, failed.Failure, opts)
		if err != nil {
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
		rng = rand.New(rand.NewPCG(opts.Seed, 0x746c636865636b))
		for range judged {
			properties.Generate(rng)
		}
	}
}

// Shrink returns the smallest program it finds that fails on the driver
// the way p did with failure (the same kind, at the same op), by
// properties.ShrinkWith's passes, each candidate lowered and run on the
// driver; first the steps after the failing one go.
func (r *Runner) Shrink(p properties.Program, failure *Failure, opts Options) (*Finding, error) {
	limit, until := opts.ShrinkRuns, opts.ShrinkTime
	if limit <= 0 {
		limit = 2000
	}
	if until <= 0 {
		until = 30 * time.Second
	}
	deadline := time.Now().Add(until)
	f := &Finding{Program: p, Steps: len(p.Steps)}
	var runErr error
	fails := func(c properties.Program) (properties.Program, bool) {
		if f.Shrinks >= limit || runErr != nil || time.Now().After(deadline) {
			return c, false
		}
		f.Shrinks++
		made, res, err := r.RunProgram(c)
		if err != nil {
			runErr = err
			return c, false
		}
		return made, res.Failure != nil && res.Failure.sig == failure.sig
	}
	best := p
	if failure.Call+1 < len(p.Steps) {
		if made, ok := fails(properties.Program{Steps: p.Steps[:failure.Call+1]}); ok {
			best = made
		}
	}
	best = properties.ShrinkWith(best, fails)
	if runErr != nil {
		return nil, fmt.Errorf("drive: shrinking: %w", runErr)
	}
	// Run the smallest once more for its result, or the original if that
	// no longer fails: a driver's runtime is deterministic in what the
	// protocol sees, or the finding says it is not.
	var made properties.Program
	var res *Result
	for _, c := range []properties.Program{best, p} {
		var err error
		if made, res, err = r.RunProgram(c); err != nil {
			return nil, fmt.Errorf("drive: shrinking: %w", err)
		}
		if res.Failure != nil && res.Failure.sig == failure.sig {
			f.Program, f.Result = made, res
			return f, nil
		}
	}
	failure.Message += " (the driver did not fail so again when the program was run again: it is not deterministic)"
	res.Failure = failure
	f.Program, f.Result = made, res
	return f, nil
}
