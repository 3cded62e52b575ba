package drive

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
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
	// Generate makes a program from the random source (nil: GenerateTensorProgram).
	// A program ends with end.
	Generate func(r *rand.Rand) []TensorCall
	// Tolerance is the relative difference numbers may have (default
	// DefaultTolerance).
	Tolerance float64
	// JudgeA and JudgeB, if set, judge driver A's and driver B's runs of
	// a program on their own (ModelJudge: the model, over the events it
	// answered): a failure is a Disagreement of field "judge A" or
	// "judge B" and the failure's kind, at its call, shrunk like the
	// others.
	JudgeA, JudgeB func(calls []TensorCall, answers []Answer) *Failure
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
	AnswerA, AnswerB Answer // the two answers to Calls[Call]
	SourceA, SourceB string // the drivers' hello sources

	Seed    uint64 // the seed of the comparison that found it
	Index   int    // the program's number in that comparison, from 1
	Steps   int    // the program's calls before shrinking
	Shrinks int    // the program pairs shrinking ran

	sig string
}

// Error reads `call 3 (add_ {"op":"add_","target":2,"b":1}): tensor.version: 2 (A) vs 1 (B)`.
func (d *Disagreement) Error() string {
	c := d.Calls[d.Call]
	return fmt.Sprintf("call %d (%s %s): %s: %s (A) vs %s (B)", d.Call, c.Op, c.AppendJSON(nil), d.Field, d.A, d.B)
}

// Report writes the disagreement for a person: the two drivers, the
// program with each driver's answer beside the call they disagree at.
func (d *Disagreement) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the drivers disagree at call %d: %s\n", d.Call, d.Field)
	fmt.Fprintf(&b, "  A (%s): %s\n", d.SourceA, d.A)
	fmt.Fprintf(&b, "  B (%s): %s\n", d.SourceB, d.B)
	fmt.Fprintf(&b, "the program (%d calls, shrunk from %d in %d runs; seed %d, program %d):\n", len(d.Calls), d.Steps, d.Shrinks, d.Seed, d.Index)
	for i := range d.Calls {
		mark := "  "
		if i == d.Call {
			mark = "> "
		}
		fmt.Fprintf(&b, "%s%2d %s\n", mark, i, d.Calls[i].AppendJSON(nil))
	}
	fmt.Fprintf(&b, "A answered: %s\n", answerText(&d.AnswerA))
	fmt.Fprintf(&b, "B answered: %s\n", answerText(&d.AnswerB))
	return b.String()
}

// answerText writes an answer without its events, which are each
// runtime's own.
func answerText(a *Answer) string {
	c := *a
	c.Events = nil
	b := c.AppendJSON(nil)
	if i := strings.IndexByte(string(b), ','); i >= 0 {
		b = append([]byte{'{'}, b[i+1:]...) // without the id, the harness's numbering
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
	rng := rand.New(rand.NewPCG(opts.Seed, 0x746c636865636b))
	p := pair{a: a, b: b, opts: opts}
	type flight struct {
		calls  []TensorCall
		ba, bb *tensorBatch
	}
	send := func() (*flight, error) {
		if !opts.More(p.sent) {
			return nil, nil
		}
		p.sent++
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
		if d := p.judge(cur.calls, ra, rb); d != nil {
			if next != nil {
				p.receive(next.ba, next.bb) // drain: its answers are not wanted
			}
			d.Seed, d.Index, d.Steps = opts.Seed, compared, len(cur.calls)
			d, err = p.shrink(d)
			return d, compared, err
		}
		cur = next
	}
	return nil, compared, err
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
	sent int
}

func (p *pair) send(r *Runner, calls []TensorCall) (*tensorBatch, error) {
	if err := r.ensure(); err != nil {
		return nil, err
	}
	return r.d.sendTensor(calls)
}

// answers is one driver's answers to a program, up to the call where it
// broke, if it did (Trouble: it exited, hung or broke the protocol; the
// runner starts it again for the next program).
type answers struct {
	got     []Answer
	trouble *Trouble
}

// receive reads both drivers' answers to a program sent to both.
func (p *pair) receive(ba, bb *tensorBatch) (a, b answers) {
	a.got, a.trouble = p.a.d.receiveTensor(ba)
	b.got, b.trouble = p.b.d.receiveTensor(bb)
	return a, b
}

// run runs calls on both drivers, one after the other.
func (p *pair) run(calls []TensorCall) (a, b answers, err error) {
	ba, err := p.send(p.a, calls)
	if err != nil {
		return a, b, err
	}
	bb, err := p.send(p.b, calls)
	if err != nil {
		return a, b, err
	}
	a, b = p.receive(ba, bb)
	return a, b, nil
}

// judge compares the answers of both drivers to calls and returns the
// first disagreement: at the earliest call whose answers differ, where
// a driver broke, or whose run a driver's judge (JudgeA, JudgeB) finds
// wrong before it.
func (p *pair) judge(calls []TensorCall, a, b answers) *Disagreement {
	var d *Disagreement
	n := min(len(a.got), len(b.got))
	for i := range n {
		if diff := compareAnswers(&a.got[i], &b.got[i], p.opts.Tolerance); diff != nil {
			d = &Disagreement{Call: i, Difference: *diff}
			break
		}
	}
	if d == nil && (a.trouble != nil || b.trouble != nil) {
		d = &Disagreement{Call: min(n, len(calls)-1), Difference: Difference{A: "answered", B: "answered"}}
		if t := a.trouble; t != nil {
			d.Field, d.A = "driver A "+string(t.Kind), t.Error()
		}
		if t := b.trouble; t != nil {
			d.Field, d.B = "driver B "+string(t.Kind), t.Error()
		}
	}
	for _, side := range []struct {
		name  string
		judge func([]TensorCall, []Answer) *Failure
		ans   answers
	}{{"A", p.opts.JudgeA, a}, {"B", p.opts.JudgeB, b}} {
		if side.judge == nil || side.ans.trouble != nil {
			continue
		}
		f := side.judge(calls, side.ans.got)
		if f == nil || d != nil && f.Call >= d.Call {
			continue
		}
		at := min(max(f.Call, 0), len(calls)-1)
		d = &Disagreement{Call: at, Difference: Difference{Field: "judge " + side.name + " " + f.What, A: "accepted", B: "accepted"}}
		if side.name == "A" {
			d.A = f.Error()
		} else {
			d.B = f.Error()
		}
	}
	if d == nil {
		return nil
	}
	d.Calls = calls
	if d.Call < len(a.got) {
		d.AnswerA = a.got[d.Call]
	}
	if d.Call < len(b.got) {
		d.AnswerB = b.got[d.Call]
	}
	d.SourceA, d.SourceB = p.a.hello.Source, p.b.hello.Source
	d.sig = d.signature()
	return d
}

// signature is what a smaller program must show to stand for d: the
// same field (its indices aside) at a call of the same op.
func (d *Disagreement) signature() string {
	field := d.Field
	if i := strings.IndexAny(field, "[("); i >= 0 && !strings.HasPrefix(field, "grads[") {
		field = field[:i]
	} else if strings.HasPrefix(field, "grads[") {
		field = "grads.values"
	}
	return field + "@" + string(d.Calls[d.Call].Op)
}
