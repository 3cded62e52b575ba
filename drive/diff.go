package drive

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/properties/harness"
)

// The differential check holds one driver of layer-5 programs to another,
// call by call: the same generated programs run on both (the Go engine of
// impl/autograd behind drive/impldriver, say, and real PyTorch behind
// examples/torchdriver), and their answers must agree on every call: the
// outcome, a refusal's message, the tensor a call made or wrote (shape,
// requires_grad, is_leaf, grad_fn and version equal; values within a
// relative tolerance) and the grads after backward. The first call they
// disagree at is a Disagreement, shrunk to a few calls on both drivers.

// DiffOptions steer Diff.
type DiffOptions struct {
	Seed uint64
	// More says whether to compare another program after n; nil compares 1000.
	More func(n int) bool
	// Generate makes a program from the random source (nil:
	// GenerateTensorProgram). A program ends with end.
	Generate func(r *rand.Rand) []TensorCall
	// Tolerance is the relative difference numbers may have (default
	// DefaultTolerance); Absolute the difference numbers closer than
	// which are equal whatever their size (default DefaultAbsolute;
	// negative: none).
	Tolerance, Absolute float64
	// ModelA, ModelB: a run of driver A (B) that the model finds wrong
	// (the checks of RunTensor: the events it answered, and each
	// refusal's kinds) is a disagreement too, of field "model A" ("model
	// B") and the failure's kind, at its call. Without them only the
	// answers are compared.
	ModelA, ModelB bool
	// Skip, if set, is asked about each disagreement before it is
	// shrunk: true sets the program aside (a difference known, and
	// counted by Skip) and the comparison goes on.
	Skip func(*Disagreement) bool
	// A disagreement that a departure either driver's hello declares
	// explains (see Departure) sets its program aside, unshrunk, and the
	// comparison goes on; Departed, if set, is handed each, to count and
	// show. Strict sets none aside.
	Departed func(*Departed)
	Strict   bool
	// ShrinkRuns bounds the program pairs that shrinking may run (default
	// 1000); ShrinkTime bounds its time (default 30s).
	ShrinkRuns int
	ShrinkTime time.Duration
}

// Disagreement is a call two drivers answered differently, in a program
// shrunk to a few calls.
type Disagreement struct {
	Calls []TensorCall // the program, shrunk; it ends with end
	Call  int          // the call the answers disagree at
	Difference
	AnswerA, AnswerB Outcome // the two answers to Calls[Call], without their events
	SourceA, SourceB string  // the drivers' hello sources
	ResultA, ResultB *Result // the two runs of Calls: answers, traces, the model's verdicts

	Seed    uint64 // the seed of the comparison that found it
	Index   int    // the program's number in that comparison, from 1
	Steps   int    // the program's calls before shrinking
	Shrinks int    // the program pairs shrinking ran

	sig string
}

// Error reads `call 3 ({"op":"add_","target":2,"b":1}): tensor.version: 2 (A) vs 1 (B)`.
func (d *Disagreement) Error() string {
	return fmt.Sprintf("call %d (%s): %s: %s (A) vs %s (B)", d.Call, d.Calls[d.Call].AppendJSON(nil), d.Field, d.A, d.B)
}

// Report writes the disagreement for a person: the two drivers, the
// program with the call they disagree at marked, and both answers to it.
func (d *Disagreement) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the drivers disagree at call %d: %s\n", d.Call, d.Field)
	fmt.Fprintf(&b, "  A (%s): %s\n", d.SourceA, d.A)
	fmt.Fprintf(&b, "  B (%s): %s\n", d.SourceB, d.B)
	if d.Shrinks == 0 && d.Steps == len(d.Calls) && d.Seed == 0 {
		fmt.Fprintf(&b, "the program (%d calls, as given):\n", len(d.Calls)) // Compare's
	} else {
		fmt.Fprintf(&b, "the program (%d calls, shrunk from %d in %d runs; seed %d, program %d):\n", len(d.Calls), d.Steps, d.Shrinks, d.Seed, d.Index)
	}
	for i := range d.Calls {
		mark := "  "
		if i == d.Call {
			mark = "> "
		}
		fmt.Fprintf(&b, "%s%2d %s\n", mark, i, d.Calls[i].AppendJSON(nil))
	}
	fmt.Fprintf(&b, "A answered: %s\n", outcomeText(&d.AnswerA))
	fmt.Fprintf(&b, "B answered: %s\n", outcomeText(&d.AnswerB))
	return b.String()
}

// Write writes the disagreement's program as a calls file in dir, named
// from base (never replacing a file: see atomicfile.CreateNew), with
// comments that say what the drivers disagree on and how to run it again
// on each; it returns the file's path.
func (d *Disagreement) Write(dir, base, commandA, commandB string) (string, error) {
	note := []string{
		fmt.Sprintf("tlcheck-drive disagreement at call %d: %s", d.Call, d.Field),
		fmt.Sprintf("A (%s): %s", d.SourceA, d.A),
		fmt.Sprintf("B (%s): %s", d.SourceB, d.B),
		fmt.Sprintf("seed %d, program %d, shrunk from %d calls to %d in %d runs", d.Seed, d.Index, d.Steps, len(d.Calls), d.Shrinks),
	}
	for _, c := range []string{commandA, commandB} {
		if c != "" {
			note = append(note, "replay: "+harness.Command("fuzz", "--exec", c, "--replay", "THIS-FILE"))
		}
	}
	var b bytes.Buffer
	if err := WriteTensorCalls(&b, d.Calls, note...); err != nil {
		return "", err
	}
	path, err := atomicfile.CreateNew(dir, base, ".calls.jsonl", b.Bytes())
	if err != nil {
		return "", fmt.Errorf("drive: writing the calls: %w", err)
	}
	return path, nil
}

// outcomeText writes an answer as the protocol does, without its id and
// events (each runtime's own).
func outcomeText(o *Outcome) string {
	a := Answer{Refused: o.Refused, Message: o.Message, Kinds: o.Kinds, Tensor: o.Tensor, Grads: o.Grads}
	b := a.AppendJSON(nil)
	if i := strings.Index(string(b), `"outcome"`); i >= 0 {
		b = append([]byte{'{'}, b[i:]...)
	}
	return string(b)
}

// Diff runs programs generated from opts.Seed on the drivers of a and b,
// both of which take layer-5 programs, compares their answers call by
// call, and returns the first disagreement, shrunk (nil if there is
// none), and how many programs it compared. The programs go to both
// drivers at once, and the next is sent while both answer the last. A
// driver that breaks (exits, hangs, writes what is not the protocol) is a
// disagreement too, at the call it broke at (field "driver A exit", ...),
// and is started again for the next run. An error is one Diff cannot go
// on from: a driver that cannot be started, or that takes no layer-5
// programs.
func Diff(a, b *Runner, opts DiffOptions) (*Disagreement, int, error) {
	opts = opts.withDefaults()
	rng := rand.New(rand.NewPCG(opts.Seed, tensorSeedStream))
	p := pair{a: a, b: b, opts: opts}
	type flight struct {
		calls  []TensorCall
		ba, bb *batch
	}
	sent := 0
	send := func() (*flight, error) {
		if !opts.More(sent) {
			return nil, nil
		}
		sent++
		f := &flight{calls: opts.Generate(rng)}
		var err error
		if f.ba, err = p.send(a, f.calls); err == nil {
			f.bb, err = p.send(b, f.calls)
		}
		return f, err
	}
	cur, err := send()
	compared := 0
	for cur != nil && err == nil {
		var next *flight
		if next, err = send(); err != nil {
			break
		}
		ra, rb := p.receive(cur.ba, cur.bb)
		compared++
		d := p.judge(cur.calls, ra, rb)
		if d != nil {
			d.Seed, d.Index, d.Steps = opts.Seed, compared, len(cur.calls)
		}
		if d != nil && !opts.Strict {
			if dep := p.departure(d); dep != nil {
				if opts.Departed != nil {
					opts.Departed(dep)
				}
				d = nil
			}
		}
		if d != nil && (opts.Skip == nil || !opts.Skip(d)) {
			if next != nil {
				p.receive(next.ba, next.bb) // drain: its answers are not wanted
			}
			d, err = p.shrink(d)
			return d, compared, err
		}
		cur = next
	}
	return nil, compared, err
}

// Compare runs calls once on the drivers of a and b, as Diff runs a
// program, and returns where their answers disagree (nil if they agree),
// unshrunk: a calls file replayed on two drivers. A disagreement that a
// departure either driver declares explains is returned as that
// departure instead (unless opts.Strict).
func Compare(a, b *Runner, calls []TensorCall, opts DiffOptions) (*Disagreement, *Departed, error) {
	p := pair{a: a, b: b, opts: opts.withDefaults()}
	ra, rb, err := p.run(calls)
	if err != nil {
		return nil, nil, err
	}
	d := p.judge(calls, ra, rb)
	if d == nil {
		return nil, nil, nil
	}
	d.Steps, d.Index = len(calls), 1
	if !opts.Strict {
		if dep := p.departure(d); dep != nil {
			return nil, dep, nil
		}
	}
	return d, nil, nil
}

func (o DiffOptions) withDefaults() DiffOptions {
	if o.More == nil {
		o.More = func(n int) bool { return n < 1000 }
	}
	if o.Generate == nil {
		o.Generate = GenerateTensorProgram
	}
	if o.Tolerance <= 0 {
		o.Tolerance = DefaultTolerance
	}
	if o.Absolute == 0 {
		o.Absolute = DefaultAbsolute
	}
	if o.ShrinkRuns <= 0 {
		o.ShrinkRuns = 1000
	}
	if o.ShrinkTime <= 0 {
		o.ShrinkTime = 30 * time.Second
	}
	return o
}

// pair is the two runners of a Diff.
type pair struct {
	a, b *Runner
	opts DiffOptions
}

func (p *pair) send(r *Runner, calls []TensorCall) (*batch, error) {
	name := "A"
	if r == p.b {
		name = "B"
	}
	if err := r.ensure(); err != nil {
		return nil, fmt.Errorf("drive: driver %s: %w", name, err)
	}
	b, err := r.d.sendTensor(calls)
	if err != nil {
		return nil, fmt.Errorf("driver %s: %w", name, err)
	}
	return b, nil
}

// receive reads both drivers' answers to a program sent to both. A
// driver that broke is started again at its next send.
func (p *pair) receive(ba, bb *batch) (*Result, *Result) {
	return p.a.d.receive(ba), p.b.d.receive(bb)
}

// run runs calls on both drivers at once.
func (p *pair) run(calls []TensorCall) (*Result, *Result, error) {
	ba, err := p.send(p.a, calls)
	if err != nil {
		return nil, nil, err
	}
	bb, err := p.send(p.b, calls)
	if err != nil {
		p.a.d.receive(ba)
		return nil, nil, err
	}
	ra, rb := p.receive(ba, bb)
	return ra, rb, nil
}

// judge compares both drivers' runs of calls and returns the first
// disagreement: at the earliest call whose answers differ, where a driver
// broke, or (with ModelA, ModelB) where the model finds a driver's run
// wrong.
func (p *pair) judge(calls []TensorCall, ra, rb *Result) *Disagreement {
	var d *Disagreement
	at := func(i int, diff Difference) {
		if d == nil || i < d.Call {
			d = &Disagreement{Call: min(i, len(calls)-1), Difference: diff}
		}
	}
	n := min(len(ra.Outcomes), len(rb.Outcomes))
	for i := range n {
		if diff := compareAnswers(&ra.Outcomes[i], &rb.Outcomes[i], tolerance{p.opts.Tolerance, max(p.opts.Absolute, 0)}); diff != nil {
			at(i, *diff)
			break
		}
	}
	for _, side := range []struct {
		name  string
		res   *Result
		model bool
	}{{"A", ra, p.opts.ModelA}, {"B", rb, p.opts.ModelB}} {
		f := side.res.Failure
		if f == nil || !f.Trouble() && !side.model {
			continue
		}
		field := "model " + side.name + " " + f.What
		if f.Trouble() {
			field = "driver " + side.name + " " + f.What
		}
		diff := Difference{Field: field, A: "accepted", B: "accepted"}
		if side.name == "A" {
			diff.A = f.Error()
		} else {
			diff.B = f.Error()
		}
		at(f.Call, diff)
	}
	if d == nil {
		return nil
	}
	d.Calls, d.ResultA, d.ResultB = calls, ra, rb
	if d.Call < len(ra.Outcomes) {
		d.AnswerA = ra.Outcomes[d.Call]
	}
	if d.Call < len(rb.Outcomes) {
		d.AnswerB = rb.Outcomes[d.Call]
	}
	d.SourceA, d.SourceB = p.a.hello.Source, p.b.hello.Source
	d.sig = d.signature()
	return d
}

// signature is what a smaller program must show to stand for d: the
// same field (its indices aside) at a call of the same op.
func (d *Disagreement) signature() string {
	field := d.Field
	if strings.HasPrefix(field, "grads[") {
		field = "grads.values"
	} else if i := strings.IndexByte(field, '['); i >= 0 {
		field = field[:i]
	}
	return field + "@" + string(d.Calls[d.Call].Op)
}

// shrink makes d's program smaller while both drivers still disagree on
// it the same way (its signature: the same field at a call of the same
// op), running each candidate on both, by the shrinker of layer-5
// programs (ShrinkTensor's): first the calls after the one they disagree
// at go, then runs of calls, then flags and values are made plainer.
func (p *pair) shrink(d *Disagreement) (*Disagreement, error) {
	deadline := time.Now().Add(p.opts.ShrinkTime)
	runs := 0
	var runErr error
	best := d
	fails := func(calls []TensorCall) bool {
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
	calls := d.Calls
	if d.Call+1 < len(calls)-1 {
		if c := append(slices.Clone(calls[:d.Call+1]), TensorCall{Op: TensorEnd}); fails(c) {
			calls = c
		}
	}
	shrinkTensorCalls(calls, fails)
	if runErr != nil {
		return nil, fmt.Errorf("drive: shrinking a disagreement: %w", runErr)
	}
	best.Seed, best.Index, best.Steps, best.Shrinks = d.Seed, d.Index, d.Steps, runs
	return best, nil
}
