package drive

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/tlcheck/tlcheck/properties/flat"
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
	last   *Result // the last run of the driver closed
	misuse bool    // programs may misuse the runtime (see Options.Misuse)
	steps  int     // programs of at least this many steps (see Options.Steps)
}

// NewRunner starts the driver and returns a Runner over it.
func NewRunner(cfg Config) (*Runner, error) {
	r := &Runner{cfg: cfg}
	if err := r.ensure(); err != nil {
		return nil, err
	}
	r.hello, r.offers = r.d.Hello(), r.d.Hello().offers()
	r.misuse = r.hello.Misuse
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
	r.d, r.last = nil, d.last
	return d.Close()
}

// Last returns the run of the last program the driver answered (nil
// before the first): a driver that misbehaves at the end of its input,
// when Close reports it, did so after this program.
func (r *Runner) Last() *Result {
	if r.d != nil && r.d.last != nil {
		return r.d.last
	}
	return r.last
}

// Run runs calls on the driver (see Driver.Run), starting it again first
// if the last run broke it. A driver that cannot be started again is an
// error.
//
// A driver whose hello asks for "restart" is started for every program:
// Run ends it after the program (see retire).
func (r *Runner) Run(calls []Call) (*Result, error) {
	if err := r.ensure(); err != nil {
		return nil, err
	}
	res, err := r.d.Run(calls)
	return r.retire(res, err)
}

// RunProgram lowers p to calls the driver takes (see Lower) and runs them.
// It returns p as run, its refs canonical.
//
// Unless the runner's programs may misuse the runtime (the driver's hello
// says "misuse", or Search's Options.Misuse), p is first made a program
// of correct use (Correct) of the calls the driver takes.
func (r *Runner) RunProgram(p flat.Program) (flat.Program, *Result, error) {
	made, calls := r.lower(p)
	res, err := r.Run(calls)
	return made, res, err
}

// Finding is a failing program, shrunk, with its run: the calls, the
// driver's answers, the trace its runtime wrote and the failure.
type Finding struct {
	Program  flat.Program  // the shrunk program, as generated (empty for a layer-5 program: see Result.TensorCalls)
	Result   *Result       // its run on the driver
	Seed     uint64        // the seed of the search that found it
	Index    int           // the failing program's number in that search, from 1
	Steps    int           // its steps before shrinking
	Shrinks  int           // the runs shrinking made
	Duration time.Duration // from the search's start to the finding, shrinking not included
	// Reproduced: the shrunk calls, run alone in a driver started for
	// them (as --replay runs a calls file), failed the same way; Result
	// is then that run. Determinism says what that run showed of a driver
	// that is not deterministic ("" when it answered the same).
	Reproduced  bool
	Determinism string

	tfjs *TfjsResult // a tfjs program's shrunk run, for ShrinkTfjs's TfjsFinding (Result is then nil)
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
	// Shrinking, if set, is told each failure before it is shrunk
	// (which, for a hang, takes a while).
	Shrinking func(*Failure)
	// Misuse says whether programs may misuse the runtime; by default
	// they may if the driver's hello says "misuse": true, and otherwise
	// every call is one a correct caller makes (Correct).
	Misuse Misuse
	// Steps asks for programs of at least Steps steps (0: the default mix
	// of GenerateProgram, or of GenerateMisuse with misuse).
	Steps int
}

// Misuse says whether a search's programs may misuse the runtime
// (PROTOCOL.md, "Correct use and misuse"): by default they may when the
// driver's hello asks for it, for a runtime that promises to refuse
// misuse; tlcheck fuzz --exec's --misuse and --misuse=false decide instead.
type Misuse uint8

const (
	MisuseAsHello Misuse = iota // as the driver's hello says
	MisuseOff                   // correct use only, whatever the hello says
	MisuseOn                    // misuse too, whatever the hello says
)

// lower makes p a program the driver takes (see RunProgram) and lowers it.
func (r *Runner) lower(p flat.Program) (flat.Program, []Call) {
	if !r.misuse {
		if r.offers != nil {
			p = filter(p, r.offers)
		}
		p = Correct(p)
	}
	return Lower(p, r.offers)
}

// generate draws the search's next program.
func (r *Runner) generate(rng *rand.Rand) flat.Program {
	if !r.misuse {
		return GenerateProgram(rng, r.steps)
	}
	return GenerateMisuse(rng, r.steps)
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
func (r *Runner) Stream(next func() (flat.Program, bool), got func(made flat.Program, res *Result) bool) error {
	type lowered struct {
		made  flat.Program
		calls []Call
	}
	return stream(r, func() (lowered, bool) {
		p, ok := next()
		if !ok {
			return lowered{}, false
		}
		made, calls := r.lower(p)
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
	return streamRuns(r, next, send, func(_ P, b *batch) *Result { return r.d.receive(b) }, alone, got)
}

// streamRuns is stream for programs of any language, StreamTfjs's too:
// receive reads the answers to a program sent.
func streamRuns[P any, R run](r *Runner, next func() (P, bool), send func(P) (*batch, error), receive func(P, *batch) R, alone func(P) (R, error), got func(P, R) bool) error {
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
	if r.hello.Restart { // one program a process: none in flight behind another
		for {
			p, ok := next()
			if !ok {
				return nil
			}
			res, err := alone(p)
			if err != nil {
				return err
			}
			if !got(p, res) {
				return nil
			}
		}
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
			res := receive(prev.p, prev.b)
			if failed := *res.failed(); failed != nil && failed.Trouble() && cur != nil && cur.b != nil {
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
					receive(cur.p, cur.b) // drain: its answers are not wanted
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
	switch opts.Misuse {
	case MisuseOn, MisuseOff:
		r.misuse = opts.Misuse == MisuseOn
	default:
		r.misuse = r.hello.Misuse
	}
	r.steps = opts.Steps
	return search(r, opts, r.flatLanguage())
}

// flatLanguage is flat programs as Search and Shrink send them: generated
// (of correct use unless the runner's programs may misuse the runtime),
// lowered and run on the driver, shrunk by shrinkLong and
// flat.ShrinkWith's passes.
func (r *Runner) flatLanguage() language[flat.Program] {
	return language[flat.Program]{
		seedStream: 0x746c636865636b, // as properties.Search
		generate:   r.generate,
		stream:     r.Stream,
		run:        r.RunProgram,
		cut: func(p flat.Program, call int) (flat.Program, bool) {
			if call+1 < len(p.Steps) {
				return flat.Program{Steps: p.Steps[:call+1]}, true
			}
			return p, false
		},
		passes: func(p flat.Program, fails func(flat.Program) (flat.Program, bool), first bool) flat.Program {
			if first {
				p = shrinkLong(p, fails)
			}
			return flat.ShrinkWith(p, fails)
		},
		size: func(p flat.Program) int { return len(p.Steps) },
		keep: func(f *Finding, p flat.Program) { f.Program = p },
	}
}

// Shrink returns the smallest program it finds that fails on the driver
// the way p did with failure (the same kind, at the same op), by
// flat.ShrinkWith's passes, each candidate lowered and run on the
// driver (and made correct use first, unless the runner's programs may
// misuse the runtime); first the steps after the failing one go, then
// whole scope blocks and acquire-release pairs (the deep shapes of long
// programs, which delta debugging over contiguous chunks cannot remove).
func (r *Runner) Shrink(p flat.Program, failure *Failure, opts Options) (*Finding, error) {
	return shrink(r, p, failure, opts, r.flatLanguage())
}

// hangTimeout shortens the call timeout while a hang (a timeout) is
// shrunk, and returns what restores it. A candidate that hangs costs its
// wait, and at the full timeout (Test's is seconds, for loaded machines)
// shrinking a hang would end, at ShrinkTime, with the program scarcely
// smaller; a tenth of it, at least 100 ms, still gives a correct call
// (milliseconds) room. The final run, which the finding shows, waits the
// full timeout: a candidate that only looked hung does not stand.
func (r *Runner) hangTimeout(failure *Failure) (restore func()) {
	if failure.What != string(TroubleTimeout) {
		return func() {}
	}
	raw, full := r.cfg.CallTimeout, r.cfg.withDefaults().CallTimeout
	short := max(full/10, 100*time.Millisecond)
	if short >= full {
		return func() {}
	}
	set := func(cfg, live time.Duration) {
		r.cfg.CallTimeout = cfg
		if r.d != nil {
			r.d.cfg.CallTimeout = live
		}
	}
	set(short, short)
	return func() { set(raw, full) }
}

// sameFailure accepts a failure of failure's kind at its op: what a
// smaller program must show to stand for it.
func sameFailure(failure *Failure) func(*Failure) bool {
	return func(g *Failure) bool { return g != nil && g.sig == failure.sig }
}

// anyFailure accepts any failure the checks find in the runtime's answers
// (not the driver's as a process). A fault often shows as one kind in a
// generated program and as another in a smaller one: impl's runtime, say,
// states its counts, so a premature free first shows as a count-mismatch
// at the release that led to it. Once shrinking to the same kind can go
// no further, the shrinkers go on towards the smallest failure of any
// kind, and the finding says what the program first showed.
func anyFailure(g *Failure) bool { return g != nil && !g.Trouble() }

// firstSeen notes on got, the shrunk program's failure, what the program
// before shrinking showed, where it is another kind or op.
func firstSeen(got, first *Failure) {
	if got.sig != first.sig {
		got.shown = fmt.Sprintf(" (the program before shrinking showed %s at call %d)", first.What, first.Call)
		got.Message += got.shown
	}
}
