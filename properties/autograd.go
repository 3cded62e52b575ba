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
	ag "github.com/tlcheck/tlcheck/properties/autograd"
	"github.com/tlcheck/tlcheck/traces"
)

// An autograd program is a program of the autograd language's in-process
// steps (package properties/autograd: ag.Step, its kinds ag.Kinds), run
// on an autograd engine over a recording impl.Runtime, and judged by
// three oracles, none of them the engine: the model, replaying the
// trace (every buffer freed once, none used after, none left at end); a
// shadow of the version groups (an in-place op bumps every alias in its
// storage's group by one and nothing else; .data starts a group); and
// ClearGrads leaving no grad. Refusals (*autograd.Error) are allowed;
// a misuse of the runtime (*impl.Error) is a bug of the engine.

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
func runAutograd(faults []impl.Fault, ckpt bool, lt autograd.Lifetime, prog []ag.Step) *AutogradFailure {
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
		ia, ib := ag.PoolIndex(s.A, len(pool)), ag.PoolIndex(s.B, len(pool))
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
		k := ag.Kinds[s.Kind]
		switch k.Op {
		case ag.Add, ag.Mul, ag.Div, ag.Sub:
			ins = []int{ia, ib}
		case ag.Exp, ag.Tanh, ag.Relu, ag.Neg, ag.Log, ag.Sum, ag.Pow, ag.Reshape:
			ins = []int{ia}
		case ag.Slice:
			if k.Mod&ag.NoGrad == 0 { // a view under NoGrad has no graph: ins stays empty, so that freeing it frees no shadow
				ins = []int{ia}
			}
		}
		var err error
		switch {
		case k.Op == ag.Leaf:
			t, lerr := e.Leaf([]int{2}, []float64{s.F, 1 - s.F}, s.A%2 == 0)
			err = add(t, lerr, newGroup())
			if err == nil {
				pool[len(pool)-1].leaf = true
			}
		case a == nil:
			continue
		case k.Mod&ag.Checkpointed != 0:
			var t *autograd.Tensor
			oerr := e.Checkpoint(func() (err error) {
				switch k.Op {
				case ag.Mul:
					t, err = a.t.Mul(b.t)
				case ag.Exp:
					t, err = a.t.Exp()
				default:
					t, err = a.t.Pow(2)
				}
				return err
			})
			err = add(t, oerr, newGroup())
		case k.Op == ag.Add || k.Op == ag.Mul || k.Op == ag.Div || k.Op == ag.Sub:
			f := map[ag.Op]func(*autograd.Tensor) (*autograd.Tensor, error){ag.Add: a.t.Add, ag.Mul: a.t.Mul, ag.Div: a.t.Div, ag.Sub: a.t.Sub}[k.Op]
			t, oerr := f(b.t)
			err = add(t, oerr, newGroup())
		case k.Op == ag.Exp || k.Op == ag.Tanh || k.Op == ag.Relu || k.Op == ag.Neg || k.Op == ag.Log || k.Op == ag.Sum:
			f := map[ag.Op]func() (*autograd.Tensor, error){ag.Exp: a.t.Exp, ag.Tanh: a.t.Tanh, ag.Relu: a.t.Relu, ag.Neg: a.t.Neg, ag.Log: a.t.Log, ag.Sum: a.t.Sum}[k.Op]
			t, oerr := f()
			err = add(t, oerr, newGroup())
		case k.Op == ag.Pow:
			t, oerr := a.t.Pow(2)
			err = add(t, oerr, newGroup())
		case k.Op == ag.Reshape:
			shape := []int{a.t.Numel()}
			if k.Mod&ag.Column != 0 {
				shape = append(shape, 1)
			}
			t, oerr := a.t.Reshape(shape...)
			err = add(t, oerr, a.group)
		case k.Op == ag.Slice:
			var t *autograd.Tensor
			oerr := noGrad(e, k.Mod, func() (err error) { t, err = a.t.Slice(0, 1); return err })
			err = add(t, oerr, a.group)
		case k.Op == ag.RetainGrad:
			_ = a.t.RetainGrad() // refused on a tensor that does not require grad, as PyTorch does
		case k.Op == ag.Detach:
			t, oerr := a.t.Detach()
			if oerr == nil && !pytorch {
				consume(ia)
			}
			err = add(t, oerr, a.group)
		case k.Op == ag.Data:
			t, oerr := a.t.Data()
			err = add(t, oerr, newGroup())
		case k.Op.InPlace():
			before := make([]int, len(pool))
			for j, p := range pool {
				before[j] = p.t.Version()
			}
			err = noGrad(e, k.Mod, func() error { return inPlace(k, a.t, b.t, s.F) })
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
		case k.Op == ag.Backward:
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
			retain := k.Mod&ag.RetainGraph != 0
			err = pool[root].t.Backward(retain)
			if err == nil && !retain && !pytorch {
				consume(root)
			}
		case k.Op == ag.ZeroGrad:
			err = e.ZeroGrad(a.t)
		case k.Op == ag.ClearGrads:
			err = e.ClearGrads()
			for _, p := range pool {
				if p.leaf && p.t.Grad() != nil {
					return fail("ClearGrads", i, fmt.Sprintf("%v: tensor %d keeps a grad after ClearGrads", s, p.t.ID()))
				}
			}
		case k.Op == ag.ScopeEnter:
			err = e.ScopeEnter()
			depth++
		case k.Op == ag.ScopeExit:
			if depth > 1 {
				err = e.ScopeExit()
				for j := range pool {
					pool[j].closed = pool[j].closed || pool[j].depth == depth
				}
				depth--
			}
		case k.Op == ag.Drop && pytorch:
			if err = a.t.Drop(); err == nil {
				a.dropped = true
			}
		case k.Op == ag.Drop:
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
	steps    []ag.Step
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
// most, checkpointed or not, under either lifetime: the autograd
// language's ag.GenerateSteps (steps, and one draw in eight an episode).
func GenerateAutograd(r *rand.Rand) AutogradProgram {
	steps, ckpt, lt := ag.GenerateSteps(r)
	return AutogradProgram{steps, ckpt, autograd.Lifetime(lt)}
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
// kind of violation): the autograd language's ag.ShrinkSteps. It returns
// the smallest program found with its failure; nil if p does not fail. A
// checkpointed program becomes a plain one whose first steps make its x,
// c and y (ag.CheckpointPrelude), if that fails the same way.
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
	steps = ag.ShrinkSteps(steps, f.poolSizes, func(q []ag.Step) ([]int, bool) {
		g := runAutograd(faults, p.ckpt, p.lifetime, q)
		if !same(g) {
			return nil, false
		}
		f = g
		return g.poolSizes, true
	})
	if p.ckpt {
		// A checkpointed program's start, written as steps of a plain
		// one: if it fails the same way, shrink that, so that what the
		// failure needs is all in steps.
		if q := (AutogradProgram{append(ag.CheckpointPrelude(), steps...), false, p.lifetime}); same(RunAutograd(q, faults)) {
			if small, g := ShrinkAutograd(q, faults); same(g) {
				return small, g
			}
		}
	}
	return AutogradProgram{steps, p.ckpt, p.lifetime}, f
}

// noGrad runs fn under the engine's NoGrad where mod says so.
func noGrad(e *autograd.Engine, mod ag.Mod, fn func() error) error {
	if mod&ag.NoGrad != 0 {
		return e.NoGrad(fn)
	}
	return fn()
}

// inPlace makes the in-place op of kind k on a: by the tensor b (scaled
// by f where the kind says alpha), by the number f, or zero_.
func inPlace(k ag.Kind, a, b *autograd.Tensor, f float64) error {
	switch {
	case k.Op == ag.Zero:
		return a.ZeroInPlace()
	case k.Op == ag.AddInPlace && k.Mod&ag.ByScalar != 0:
		return a.AddScalarInPlace(f)
	case k.Op == ag.AddInPlace:
		return a.AddInPlace(b, f)
	case k.Op == ag.SubInPlace:
		return a.SubInPlace(b, f)
	case k.Op == ag.DivInPlace:
		return a.DivInPlace(b)
	case k.Op == ag.MulInPlace && k.Mod&ag.ByTensor != 0:
		return a.MulTensorInPlace(b)
	default:
		return a.MulInPlace(f)
	}
}

// RunAutogradBytes decodes data as an autograd program (the autograd
// language's ag.DecodeSteps: four bytes a step, the kind, two operands, a
// constant; a kind byte from ag.EpisodeByte up an episode; a partial step
// at the end makes the program checkpointed), runs it on an engine with
// faults on (none: the correct one) under each lifetime in turn,
// TensorLogic's then PyTorch's, and returns the first breach the oracles
// find: FuzzAutogradProgram's property.
func RunAutogradBytes(data []byte, faults ...impl.Fault) error {
	prog, ckpt := ag.DecodeSteps(data)
	for _, lt := range []autograd.Lifetime{autograd.LifetimeTensorLogic, autograd.LifetimePyTorch} {
		if f := runAutograd(faults, ckpt, lt, prog); f != nil {
			return f
		}
	}
	return nil
}
