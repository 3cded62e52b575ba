package properties

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// An autograd program is a list of steps over a pool of tensors, each
// naming its operands by index into the pool: an operand k below
// agNewest is index k (modulo the pool's length), one from agNewest up
// the (k-agNewest)-th newest tensor, so that a step can reach what the
// steps just before it made (see agEpisode). It is
// run on an autograd engine over a recording impl.Runtime, and judged by
// three oracles, none of them the engine: the model, replaying the
// trace (every buffer freed once, none used after, none left at end); a
// shadow of the version groups (an in-place op bumps every alias in its
// storage's group by one and nothing else; .data starts a group); and
// ClearGrads leaving no grad. Refusals (*autograd.Error) are allowed;
// a misuse of the runtime (*impl.Error) is a bug of the engine.
type agStep struct {
	Kind int // see agKinds
	A, B int
	F    float64
}

var agKinds = []string{"leaf", "add", "mul", "div", "sub", "exp", "tanh", "relu", "pow", "neg", "log", "sum",
	"reshape", "slice", "detach", "data", "add_", "mul_", "zero_", "backward", "backward-retain",
	"zero_grad", "clear_grads", "scope_enter", "scope_exit", "free_graph",
	// Checkpoints: ops whose saved tensors are checkpointed, and an
	// in-place op under NoGrad, which takes no snapshot.
	"ckpt-mul", "ckpt-exp", "ckpt-pow", "mul_-nograd",
	// In-place ops by a tensor and by a number, a view made under NoGrad,
	// a reshape to a column (so that operands broadcast), retain_grad.
	"sub_", "div_", "mul_t", "add_n", "slice-nograd", "reshape-col", "retain_grad"}

func (s agStep) String() string {
	return fmt.Sprintf("%s(%d,%d,%g)", agKinds[s.Kind], s.A, s.B, s.F)
}

// agTensor is a pool entry with its shadow version group.
type agTensor struct {
	t     *autograd.Tensor
	group int
	leaf  bool
	ins   []int // pool indices of its operands: the shadow of the graph
	// consumed: a backward without retain_graph, a detach or a
	// free_graph downstream has handed it to the graph engine to free;
	// the teardown drops only the graphs the program still holds
	// (TensorLogic's lifetime).
	consumed bool
	// PyTorch's lifetime: dropped by free_graph, or closed: made in a
	// scope that has exited, which dropped it.
	dropped, closed bool
	depth           int // the scope depth it was made at
}

// runAutograd runs prog on an engine whose runtime has faults on, with
// checkpointing on for every op if ckpt (autograd.Config.Checkpoint) and
// the lifetime lt, and returns the first breach an oracle finds. A fault
// impl.Config refuses panics, as impl.New does: it is a misuse of the
// harness.
//
// The lifetimes differ in what a step means and what the teardown does:
// under TensorLogic's, free_graph is Engine.FreeGraph and the teardown
// frees the graphs the program still holds; under PyTorch's, free_graph
// is Tensor.Drop (Python's del) and the teardown is End's (every
// reference dropped), and one more oracle holds: a tensor the program
// has not dropped stays alive (readable after backward, after Detach).
func runAutograd(faults []impl.Fault, ckpt bool, lt autograd.Lifetime, prog []agStep) *AutogradFailure {
	var rec impl.Recording
	rt := impl.New(impl.Config{Faults: faults, Record: rec.Record})
	e, err := autograd.New(rt, autograd.Config{Record: rec.Record, Checkpoint: ckpt, Lifetime: lt})
	if err != nil {
		panic(err)
	}
	pytorch := lt == autograd.LifetimePyTorch
	var pool []agTensor
	sizes := make([]int, 0, len(prog))
	fail := func(prop string, step int, msg string) *AutogradFailure {
		return &AutogradFailure{Property: prop, Step: step, Message: msg, Trace: slices.Clone(rec.Events()), poolSizes: slices.Clone(sizes)}
	}
	groups, depth := 0, 0
	newGroup := func() int { groups++; return groups }
	runtimeBug := func(i int, err error) *AutogradFailure {
		var ie *impl.Error
		if errors.As(err, &ie) {
			return fail("RuntimeUse", i, fmt.Sprintf("the engine misused the runtime: %v", err))
		}
		return nil
	}
	_ = e.ScopeEnter()
	depth++
	if ckpt {
		// A checkpointed program starts from x, a leaf that requires
		// grad, c, one that does not, and y = x*c, which saves c: an
		// in-place op on c and a backward through y later restore it.
		for j, req := range []bool{true, false} {
			t, err := e.Leaf([]int{2}, []float64{1.5 - float64(j), 0.5}, req)
			if err != nil {
				return fail("RuntimeUse", 0, fmt.Sprintf("the checkpointed program's leaves: %v", err))
			}
			pool = append(pool, agTensor{t: t, group: newGroup(), leaf: true, depth: depth})
		}
		y, err := pool[0].t.Mul(pool[1].t)
		if err != nil {
			return fail("RuntimeUse", 0, fmt.Sprintf("the checkpointed program's y: %v", err))
		}
		pool = append(pool, agTensor{t: y, group: newGroup(), ins: []int{0, 1}, depth: depth})
	}
	for i, s := range prog {
		sizes = append(sizes, len(pool))
		var a, b *agTensor
		ia, ib := poolIndex(s.A, len(pool)), poolIndex(s.B, len(pool))
		if len(pool) > 0 {
			a, b = &pool[ia], &pool[ib]
		}
		var ins []int
		add := func(t *autograd.Tensor, err error, group ...int) error {
			if len(group) == 0 {
				group = append(group, newGroup())
			}
			if err == nil && t != nil {
				pool = append(pool, agTensor{t: t, group: group[0], ins: ins, depth: depth})
			}
			return err
		}
		var consume func(int)
		consume = func(j int) {
			if pool[j].consumed {
				return
			}
			pool[j].consumed = true
			for _, k := range pool[j].ins {
				consume(k)
			}
		}
		switch agKinds[s.Kind] {
		case "add", "mul", "div", "sub", "ckpt-mul":
			ins = []int{ia, ib}
		case "exp", "tanh", "relu", "neg", "log", "sum", "pow", "reshape", "slice", "ckpt-exp", "ckpt-pow", "reshape-col":
			ins = []int{ia}
		}
		var err error
		switch k := agKinds[s.Kind]; {
		case k == "leaf":
			t, lerr := e.Leaf([]int{2}, []float64{s.F, 1 - s.F}, s.A%2 == 0)
			err = add(t, lerr, newGroup())
			if err == nil {
				pool[len(pool)-1].leaf = true
			}
		case a == nil:
			continue
		case k == "add" || k == "mul" || k == "div" || k == "sub":
			f := map[string]func(*autograd.Tensor) (*autograd.Tensor, error){"add": a.t.Add, "mul": a.t.Mul, "div": a.t.Div, "sub": a.t.Sub}[k]
			t, oerr := f(b.t)
			err = add(t, oerr, newGroup())
		case k == "exp" || k == "tanh" || k == "relu" || k == "neg" || k == "log" || k == "sum":
			f := map[string]func() (*autograd.Tensor, error){"exp": a.t.Exp, "tanh": a.t.Tanh, "relu": a.t.Relu, "neg": a.t.Neg, "log": a.t.Log, "sum": a.t.Sum}[k]
			t, oerr := f()
			err = add(t, oerr, newGroup())
		case k == "pow":
			t, oerr := a.t.Pow(2)
			err = add(t, oerr, newGroup())
		case k == "ckpt-mul" || k == "ckpt-exp" || k == "ckpt-pow":
			var t *autograd.Tensor
			oerr := e.Checkpoint(func() (err error) {
				switch k {
				case "ckpt-mul":
					t, err = a.t.Mul(b.t)
				case "ckpt-exp":
					t, err = a.t.Exp()
				default:
					t, err = a.t.Pow(2)
				}
				return err
			})
			err = add(t, oerr, newGroup())
		case k == "reshape":
			t, oerr := a.t.Reshape(a.t.Numel())
			err = add(t, oerr, a.group)
		case k == "slice":
			t, oerr := a.t.Slice(0, 1)
			err = add(t, oerr, a.group)
		case k == "slice-nograd": // no graph: ins stays empty, so that freeing it frees no shadow
			var t *autograd.Tensor
			oerr := e.NoGrad(func() (err error) { t, err = a.t.Slice(0, 1); return err })
			err = add(t, oerr, a.group)
		case k == "reshape-col":
			t, oerr := a.t.Reshape(a.t.Numel(), 1)
			err = add(t, oerr, a.group)
		case k == "retain_grad":
			a.t.RetainGrad()
		case k == "detach":
			t, oerr := a.t.Detach()
			if oerr == nil && !pytorch {
				consume(ia)
			}
			err = add(t, oerr, a.group)
		case k == "data":
			t, oerr := a.t.Data()
			err = add(t, oerr, newGroup())
		case k == "add_" || k == "mul_" || k == "zero_" || k == "mul_-nograd" || k == "sub_" || k == "div_" || k == "mul_t" || k == "add_n":
			before := make([]int, len(pool))
			for j, p := range pool {
				before[j] = p.t.Version()
			}
			switch k {
			case "add_":
				err = a.t.AddInPlace(b.t, s.F)
			case "sub_":
				err = a.t.SubInPlace(b.t, s.F)
			case "div_":
				err = a.t.DivInPlace(b.t)
			case "mul_t":
				err = a.t.MulTensorInPlace(b.t)
			case "add_n":
				err = a.t.AddScalarInPlace(s.F)
			case "mul_":
				err = a.t.MulInPlace(s.F)
			case "mul_-nograd":
				err = e.NoGrad(func() error { return a.t.MulInPlace(s.F) })
			default:
				err = a.t.ZeroInPlace()
			}
			// The shadow does not follow a rebase: tensors made from
			// a before this op keep pointing at its old history, which
			// is all that freeing them frees.
			for j, p := range pool[:len(before)] {
				want := before[j]
				if err == nil && p.group == a.group {
					want++
				}
				if got := p.t.Version(); got != want {
					return fail("Versions", i, fmt.Sprintf("%v: tensor %d (group %d) at version %d, want %d", s, p.t.ID(), p.group, got, want))
				}
			}
		case k == "backward" || k == "backward-retain":
			// The root is a's sum where a has more than one element,
			// so that most backwards run.
			root := ia
			if a.t.Numel() != 1 {
				ins = []int{ia}
				if err = add(a.t.Sum()); err != nil {
					break
				}
				root = len(pool) - 1
			}
			err = pool[root].t.Backward(k == "backward-retain")
			if err == nil && k == "backward" && !pytorch {
				consume(root)
			}
		case k == "zero_grad":
			err = e.ZeroGrad(a.t)
		case k == "clear_grads":
			err = e.ClearGrads()
			for _, p := range pool {
				if p.leaf && p.t.Grad() != nil {
					return fail("ClearGrads", i, fmt.Sprintf("%v: tensor %d keeps a grad after ClearGrads", s, p.t.ID()))
				}
			}
		case k == "scope_enter":
			err = e.ScopeEnter()
			depth++
		case k == "scope_exit":
			if depth > 1 {
				err = e.ScopeExit()
				for j := range pool {
					pool[j].closed = pool[j].closed || pool[j].depth == depth
				}
				depth--
			}
		case k == "free_graph" && pytorch:
			if err = a.t.Drop(); err == nil {
				a.dropped = true
			}
		case k == "free_graph":
			err = e.FreeGraph(a.t)
			consume(ia)
		}
		if bug := runtimeBug(i, err); bug != nil {
			return bug
		}
		if !pytorch {
			continue
		}
		for _, p := range pool {
			if !p.dropped && !p.closed && !p.t.Alive() {
				return fail("Held", i, fmt.Sprintf("%v: tensor %d was freed while the program holds it", s, p.t.ID()))
			}
		}
	}
	// Teardown: free every graph still alive (under PyTorch's lifetime,
	// End's to do), close every scope.
	for _, p := range pool {
		if !pytorch && p.t.Alive() && p.t.GradFn() != "" && !p.consumed {
			if bug := runtimeBug(len(prog), e.FreeGraph(p.t)); bug != nil {
				return bug
			}
		}
	}
	for ; depth > 0; depth-- {
		if bug := runtimeBug(len(prog), e.ScopeExit()); bug != nil {
			return bug
		}
	}
	if bug := runtimeBug(len(prog), e.End()); bug != nil {
		return bug
	}
	rep, err := model.Replay(rec.Source())
	if err != nil {
		return fail("Model", len(prog), fmt.Sprintf("the trace does not replay: %v", err))
	}
	if len(rep.Violations) > 0 {
		v := rep.Violations[0]
		f := fail("Model", len(prog), fmt.Sprintf("%s at event %d: %s", v.Kind, v.Event, v.Message))
		f.Kind = v.Kind
		return f
	}
	return nil
}

// AutogradFailure is a breach of the autograd property, found by one of
// its oracles:
//
//	RuntimeUse  the engine never misuses the runtime (no *impl.Error)
//	Versions    an in-place op bumps every alias of its storage by one, and nothing else
//	ClearGrads  after ClearGrads no leaf keeps a grad
//	Held        PyTorch's lifetime: a tensor the program holds (not dropped, its scope open) is alive
//	Model       the recorded trace, replayed by the model, has no violation
type AutogradFailure struct {
	Property string
	Kind     traces.Kind // Model: the kind of the first violation
	Step     int         // the step that broke it; the program's length for Model
	Message  string
	Trace    []traces.Event // the run's trace, up to the breach
	// poolSizes is the pool's length before each step run, for the
	// shrinker to re-point operands when it drops a step that made a
	// tensor (see repoint).
	poolSizes []int
}

func (f *AutogradFailure) Error() string {
	return fmt.Sprintf("autograd property %s broken at step %d: %s", f.Property, f.Step, f.Message)
}

// Events is the length of the failure's trace.
func (f *AutogradFailure) Events() int { return len(f.Trace) }

// WriteTrace writes the failure's trace as a file `tlcheck replay` reads.
func (f *AutogradFailure) WriteTrace(w io.Writer) error {
	return writeTrace(w, impl.Header(), f.Trace)
}

// AutogradProgram is a generated autograd program: steps over a pool of
// tensors, each naming its operands by index into the pool. Any
// subsequence of a program is a program, so shrinking drops steps freely.
// A checkpointed program runs with autograd.Config.Checkpoint and starts
// from two leaves, x that requires grad and c that does not, and y = x*c.
// A program runs under one lifetime (autograd.Config.Lifetime); its
// free_graph steps drop a tensor under PyTorch's (see runAutograd).
type AutogradProgram struct {
	steps    []agStep
	ckpt     bool
	lifetime autograd.Lifetime
}

// Len is the program's number of steps.
func (p AutogradProgram) Len() int { return len(p.steps) }

// String lists the steps, one a line: kind(a,b,constant).
func (p AutogradProgram) String() string {
	var b strings.Builder
	if p.lifetime != autograd.LifetimeTensorLogic {
		fmt.Fprintf(&b, "lifetime: %v\n", p.lifetime)
	}
	if p.ckpt {
		b.WriteString("checkpoint: x=leaf(requires grad), c=leaf, y=x*c\n")
	}
	for _, s := range p.steps {
		b.WriteString(s.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// GenerateAutograd draws a program of at least 1 and about 30 steps at
// most, checkpointed or not, under either lifetime: steps, and one draw
// in eight an episode (see agEpisode) instead of a step.
func GenerateAutograd(r *rand.Rand) AutogradProgram {
	n := 1 + r.IntN(30)
	var steps []agStep
	for len(steps) < n {
		if r.IntN(8) == 0 {
			steps = append(steps, drawEpisode(r)...)
			continue
		}
		steps = append(steps, drawStep(r, len(agKinds)))
	}
	ckpt := r.IntN(2) == 1
	return AutogradProgram{steps, ckpt, autograd.Lifetime(r.IntN(2))}
}

// RunAutograd runs p on an autograd engine over a runtime with faults on
// (none: the correct one) and returns the first breach, or nil. faults
// must be ones impl.Config takes (see impl.Catalog): another engine's
// fault panics, as impl.New does.
func RunAutograd(p AutogradProgram, faults []impl.Fault) *AutogradFailure {
	return runAutograd(faults, p.ckpt, p.lifetime, p.steps)
}

// SearchAutograd runs generated programs until one breaks the property or
// more says stop, and returns it, its failure and the programs run.
func SearchAutograd(faults []impl.Fault, seed uint64, more func(n int) bool) (AutogradProgram, *AutogradFailure, int) {
	r := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	return searchFirst(more, func(int) AutogradProgram { return GenerateAutograd(r) },
		func(p AutogradProgram) *AutogradFailure { return RunAutograd(p, faults) })
}

// ShrinkAutograd removes steps from a failing program, and lowers
// operands, while it still breaks the same property (for Model, with the same
// kind of violation), and returns the smallest program found with its
// failure; nil if p does not fail. A checkpointed program becomes a
// plain one whose first steps make its x, c and y, if that fails the
// same way.
func ShrinkAutograd(p AutogradProgram, faults []impl.Fault) (AutogradProgram, *AutogradFailure) {
	f := RunAutograd(p, faults)
	if f == nil {
		return p, nil
	}
	same := func(g *AutogradFailure) bool { return g != nil && g.Property == f.Property && g.Kind == f.Kind }
	steps := p.steps[:min(len(p.steps), f.Step+1)]
	if g := runAutograd(faults, p.ckpt, p.lifetime, steps); same(g) {
		f = g
	} else {
		steps = p.steps
	}
	for changed := true; changed; {
		changed = false
		for i := len(steps) - 1; i >= 0; i-- {
			// Dropping a step that made a tensor moves every later tensor
			// down the pool: try the later operands re-pointed at the
			// tensors they named, then as they were.
			for _, q := range [][]agStep{repoint(steps, i, f.poolSizes), slices.Delete(slices.Clone(steps), i, i+1)} {
				if q == nil {
					continue
				}
				if g := runAutograd(faults, p.ckpt, p.lifetime, q); same(g) {
					steps, f, changed = q, g, true
					break
				}
			}
		}
		// An operand names a tensor by its index in the pool, so a step
		// dropped above may leave one pointing further than it needs:
		// try every smaller index.
		for i := range steps {
			for _, op := range []func(*agStep) *int{func(s *agStep) *int { return &s.A }, func(s *agStep) *int { return &s.B }} {
				for v := 0; v < *op(&steps[i]); v++ {
					q := slices.Clone(steps)
					*op(&q[i]) = v
					if g := runAutograd(faults, p.ckpt, p.lifetime, q); same(g) {
						steps, f, changed = q, g, true
						break
					}
				}
			}
		}
	}
	if p.ckpt {
		// A checkpointed program's start, written as steps of a plain
		// one (only y = x*c checkpointed): if it fails the same way,
		// shrink that, so that what the failure needs is all in steps.
		pre := []agStep{{Kind: slices.Index(agKinds, "leaf"), A: 0, F: 1.5}, {Kind: slices.Index(agKinds, "leaf"), A: 1, F: 0.5},
			{Kind: slices.Index(agKinds, "ckpt-mul"), A: 0, B: 1}}
		if q := (AutogradProgram{append(pre, steps...), false, p.lifetime}); same(RunAutograd(q, faults)) {
			if small, g := ShrinkAutograd(q, faults); same(g) {
				return small, g
			}
		}
	}
	return AutogradProgram{steps, p.ckpt, p.lifetime}, f
}

// repoint returns steps without step i, its later operands re-pointed at
// the tensors they named in the run whose pool lengths before each step
// were sizes: a tensor after the ones step i made moves down by their
// number. It returns nil when step i made no tensor, or sizes does not
// say (the run stopped before it).
func repoint(steps []agStep, i int, sizes []int) []agStep {
	if i+1 >= len(sizes) || sizes[i+1] == sizes[i] {
		return nil
	}
	from, made := sizes[i], sizes[i+1]-sizes[i]
	q := slices.Delete(slices.Clone(steps), i, i+1)
	for j := i + 1; j < len(steps) && j < len(sizes); j++ {
		s := &q[j-1]
		for _, o := range []*int{&s.A, &s.B} {
			n := sizes[j]
			if n == 0 {
				continue
			}
			switch k := poolIndex(*o, n); {
			case *o < agNewest && k >= from+made:
				*o = k - made
			case *o >= agNewest && k < from:
				// Counted from the newest, it is made tensors nearer.
				*o = newest(n - 1 - k - made)
			}
		}
	}
	return q
}

// drawStep draws one step from r.
func drawStep(r *rand.Rand, kinds int) agStep {
	return agStep{Kind: r.IntN(kinds), A: r.IntN(agOperands), B: r.IntN(agOperands), F: float64(r.IntN(7)-3) / 2}
}

// agEpisodeByte is the least kind byte of RunAutogradBytes that makes an
// episode: one byte in sixteen.
const agEpisodeByte = 240

// Operands: below agNewest an index into the pool, from agNewest up to
// agOperands-1 the (k-agNewest)-th newest tensor.
const (
	agNewest   = 8
	agOperands = 16
)

// newest is the operand naming the i-th newest tensor (0: the last made).
func newest(i int) int { return agNewest + i }

// poolIndex is the index operand k names in a pool of n tensors (0 for
// an empty pool).
func poolIndex(k, n int) int {
	switch {
	case n == 0:
		return 0
	case k < agNewest:
		return k % n
	default:
		return n - 1 - (k-agNewest)%n
	}
}

// RunAutogradBytes decodes data as an autograd program, four bytes a step
// (the kind, two operands, a constant), runs it on an engine with faults
// on (none: the correct one) under each lifetime in turn, TensorLogic's
// then PyTorch's, and returns the first breach the oracles find:
// FuzzAutogradProgram's property. A kind byte from agEpisodeByte up
// is an episode (see agEpisode) whose parameters are the other three
// bytes. A partial step left over at the end (1 to 3 bytes) makes the
// program checkpointed (see AutogradProgram), so that inputs of whole
// steps keep the meaning they had before checkpoints; operand bytes are
// taken modulo 16 (agOperands) and kind bytes below agEpisodeByte modulo
// the kinds, so that bytes below 8 keep the meaning they had before
// episodes and operands that name the newest tensors.
func RunAutogradBytes(data []byte, faults ...impl.Fault) error {
	ckpt := len(data)%4 != 0
	prog := make([]agStep, 0, len(data)/4)
	for ; len(data) >= 4 && len(prog) < 64; data = data[4:] {
		f := float64(int(data[3]%7)-3) / 2
		if data[0] >= agEpisodeByte {
			prog = append(prog, agEpisode(int(data[1]), int(data[2]), int(data[3]), f)...)
			continue
		}
		prog = append(prog, agStep{Kind: int(data[0]) % len(agKinds), A: int(data[1] % agOperands), B: int(data[2] % agOperands), F: f})
	}
	for _, lt := range []autograd.Lifetime{autograd.LifetimeTensorLogic, autograd.LifetimePyTorch} {
		if f := runAutograd(faults, ckpt, lt, prog); f != nil {
			return f
		}
	}
	return nil
}
