package properties

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
	"github.com/tlcheck/tlcheck/model"
	ag "github.com/tlcheck/tlcheck/properties/autograd"
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

// agRun is one run of an autograd program: the engine, what it recorded,
// the pool of tensors with their shadows, the scope depth.
type agRun struct {
	e       *autograd.Engine
	rec     *impl.Recording
	pytorch bool // PyTorch's lifetime, not TensorLogic's
	pool    []agTensor
	sizes   []int // the pool's length before each step run
	groups  int   // the version groups made so far
	depth   int
}

// agCall is one step as the runner makes it: the step, its kind, its
// operands resolved in the pool (nil where the pool is empty), and the
// pool indices of what the tensor it makes is computed from.
type agCall struct {
	i    int // the step's index in the program
	s    ag.Step
	k    ag.Kind
	a, b *agTensor
	ia   int
	ins  []int
}

// agOp makes one operation on the engine. It returns a breach an oracle
// found during the step, or the engine's answer: a refusal
// (*autograd.Error) is allowed, a misuse of the runtime (*impl.Error) is
// judged by runtimeBug.
type agOp func(r *agRun, c *agCall) (*AutogradFailure, error)

// agOps is how the runner makes each operation the autograd language runs
// in process: one entry per ag.Ops(ag.InProcess) (TestAutogradRunsEveryOp).
// A kind's Mod says how (checkpointed, under NoGrad, by a tensor or a
// number, a reshape to a column).
var agOps = map[ag.Op]agOp{
	ag.Leaf: func(r *agRun, c *agCall) (*AutogradFailure, error) {
		t, err := r.e.Leaf([]int{2}, []float64{c.s.F, 1 - c.s.F}, c.s.A%2 == 0)
		err = r.add(c, t, err, r.newGroup())
		if err == nil {
			r.pool[len(r.pool)-1].leaf = true
		}
		return nil, err
	},
	ag.Add:  agBinary((*autograd.Tensor).Add),
	ag.Sub:  agBinary((*autograd.Tensor).Sub),
	ag.Mul:  agBinary((*autograd.Tensor).Mul),
	ag.Div:  agBinary((*autograd.Tensor).Div),
	ag.Neg:  agUnary((*autograd.Tensor).Neg),
	ag.Exp:  agUnary((*autograd.Tensor).Exp),
	ag.Log:  agUnary((*autograd.Tensor).Log),
	ag.Tanh: agUnary((*autograd.Tensor).Tanh),
	ag.Relu: agUnary((*autograd.Tensor).Relu),
	ag.Sum:  agUnary((*autograd.Tensor).Sum),
	ag.Pow:  agUnary(func(a *autograd.Tensor) (*autograd.Tensor, error) { return a.Pow(2) }),
	ag.Reshape: func(r *agRun, c *agCall) (*AutogradFailure, error) {
		shape := []int{c.a.t.Numel()}
		if c.k.Mod&ag.Column != 0 {
			shape = append(shape, 1)
		}
		return nil, r.make(c, c.a.group, func() (*autograd.Tensor, error) { return c.a.t.Reshape(shape...) })
	},
	ag.Slice: func(r *agRun, c *agCall) (*AutogradFailure, error) {
		return nil, r.make(c, c.a.group, func() (*autograd.Tensor, error) { return c.a.t.Slice(0, 1) })
	},
	ag.Detach: func(r *agRun, c *agCall) (*AutogradFailure, error) {
		t, err := c.a.t.Detach()
		if err == nil && !r.pytorch {
			r.consume(c.ia)
		}
		return nil, r.add(c, t, err, c.a.group)
	},
	ag.Data: func(r *agRun, c *agCall) (*AutogradFailure, error) {
		return nil, r.make(c, r.newGroup(), c.a.t.Data)
	},
	ag.AddInPlace: agInPlace,
	ag.SubInPlace: agInPlace,
	ag.MulInPlace: agInPlace,
	ag.DivInPlace: agInPlace,
	ag.Zero:       agInPlace,
	ag.Backward: func(r *agRun, c *agCall) (*AutogradFailure, error) {
		// The root is a's sum where a has more than one element,
		// so that most backwards run.
		root := c.ia
		if c.a.t.Numel() != 1 {
			c.ins = []int{c.ia}
			t, err := c.a.t.Sum()
			if err = r.add(c, t, err, r.newGroup()); err != nil {
				return nil, err
			}
			root = len(r.pool) - 1
		}
		retain := c.k.Mod&ag.RetainGraph != 0
		err := r.pool[root].t.Backward(retain)
		if err == nil && !retain && !r.pytorch {
			r.consume(root)
		}
		return nil, err
	},
	ag.ZeroGrad: func(r *agRun, c *agCall) (*AutogradFailure, error) { return nil, r.e.ZeroGrad(c.a.t) },
	ag.RetainGrad: func(r *agRun, c *agCall) (*AutogradFailure, error) {
		_ = c.a.t.RetainGrad() // refused on a tensor that does not require grad, as PyTorch does
		return nil, nil
	},
	// free_graph: Tensor.Drop (Python's del) under PyTorch's lifetime,
	// Engine.FreeGraph under TensorLogic's.
	ag.Drop: func(r *agRun, c *agCall) (*AutogradFailure, error) {
		if r.pytorch {
			err := c.a.t.Drop()
			if err == nil {
				c.a.dropped = true
			}
			return nil, err
		}
		err := r.e.FreeGraph(c.a.t)
		r.consume(c.ia)
		return nil, err
	},
	ag.ClearGrads: func(r *agRun, c *agCall) (*AutogradFailure, error) {
		err := r.e.ClearGrads()
		for _, p := range r.pool {
			if p.leaf && p.t.Grad() != nil {
				return r.fail("ClearGrads", c.i, fmt.Sprintf("%v: tensor %d keeps a grad after ClearGrads", c.s, p.t.ID())), nil
			}
		}
		return nil, err
	},
	ag.ScopeEnter: func(r *agRun, c *agCall) (*AutogradFailure, error) {
		err := r.e.ScopeEnter()
		r.depth++
		return nil, err
	},
	ag.ScopeExit: func(r *agRun, c *agCall) (*AutogradFailure, error) {
		if r.depth <= 1 {
			return nil, nil // the program's own scope is the teardown's to close
		}
		err := r.e.ScopeExit()
		for j := range r.pool {
			r.pool[j].closed = r.pool[j].closed || r.pool[j].depth == r.depth
		}
		r.depth--
		return nil, err
	},
}

// agBinary makes a binary op of a and b, a new version group.
func agBinary(f func(a, b *autograd.Tensor) (*autograd.Tensor, error)) agOp {
	return func(r *agRun, c *agCall) (*AutogradFailure, error) {
		return nil, r.make(c, r.newGroup(), func() (*autograd.Tensor, error) { return f(c.a.t, c.b.t) })
	}
}

// agUnary makes a unary op of a, a new version group.
func agUnary(f func(a *autograd.Tensor) (*autograd.Tensor, error)) agOp {
	return func(r *agRun, c *agCall) (*AutogradFailure, error) {
		return nil, r.make(c, r.newGroup(), func() (*autograd.Tensor, error) { return f(c.a.t) })
	}
}

// agInPlace makes an in-place op on a and holds the versions to the
// shadow's groups: a's group each one up, every other tensor as it was.
func agInPlace(r *agRun, c *agCall) (*AutogradFailure, error) {
	before := make([]int, len(r.pool))
	for j, p := range r.pool {
		before[j] = p.t.Version()
	}
	a, b, k, f := c.a.t, c.b.t, c.k, c.s.F
	err := r.under(k.Mod, func() error {
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
	})
	// The shadow does not follow a rebase: tensors made from a before
	// this op keep pointing at its old history, which is all that
	// freeing them frees.
	for j, p := range r.pool[:len(before)] {
		want := before[j]
		if err == nil && p.group == c.a.group {
			want++
		}
		if got := p.t.Version(); got != want {
			return r.fail("Versions", c.i, fmt.Sprintf("%v: tensor %d (group %d) at version %d, want %d", c.s, p.t.ID(), p.group, got, want)), nil
		}
	}
	return nil, err
}

func (r *agRun) newGroup() int { r.groups++; return r.groups }

func (r *agRun) fail(prop string, step int, msg string) *AutogradFailure {
	return &AutogradFailure{Property: prop, Step: step, Message: msg, Trace: slices.Clone(r.rec.Events()), poolSizes: slices.Clone(r.sizes)}
}

// runtimeBug is the RuntimeUse breach err is, if it is a misuse of the
// runtime (*impl.Error), at step i.
func (r *agRun) runtimeBug(i int, err error) *AutogradFailure {
	var ie *impl.Error
	if errors.As(err, &ie) {
		return r.fail("RuntimeUse", i, fmt.Sprintf("the engine misused the runtime: %v", err))
	}
	return nil
}

// add puts t, made by call c in version group group, in the pool, unless
// err says it was not made.
func (r *agRun) add(c *agCall, t *autograd.Tensor, err error, group int) error {
	if err == nil && t != nil {
		r.pool = append(r.pool, agTensor{t: t, group: group, ins: c.ins, depth: r.depth})
	}
	return err
}

// under runs fn as mod says: under the engine's Checkpoint, under its
// NoGrad, or plainly.
func (r *agRun) under(mod ag.Mod, fn func() error) error {
	switch {
	case mod&ag.Checkpointed != 0:
		return r.e.Checkpoint(fn)
	case mod&ag.NoGrad != 0:
		return r.e.NoGrad(fn)
	}
	return fn()
}

// make makes a tensor by f, as c's kind says (see under), and adds it in
// version group group.
func (r *agRun) make(c *agCall, group int, f func() (*autograd.Tensor, error)) error {
	var t *autograd.Tensor
	err := r.under(c.k.Mod, func() (err error) { t, err = f(); return err })
	return r.add(c, t, err, group)
}

// consume marks pool entry j, and what it was computed from, handed to
// the graph engine to free.
func (r *agRun) consume(j int) {
	if r.pool[j].consumed {
		return
	}
	r.pool[j].consumed = true
	for _, k := range r.pool[j].ins {
		r.consume(k)
	}
}

// agIns is what the tensor a step of kind k makes is computed from: both
// operands of a binary op, the one of a unary op or a view, none else (a
// view under NoGrad has no graph, so that freeing it frees no shadow).
func agIns(k ag.Kind, ia, ib int) []int {
	switch k.Op {
	case ag.Add, ag.Mul, ag.Div, ag.Sub:
		return []int{ia, ib}
	case ag.Exp, ag.Tanh, ag.Relu, ag.Neg, ag.Log, ag.Sum, ag.Pow, ag.Reshape:
		return []int{ia}
	case ag.Slice:
		if k.Mod&ag.NoGrad == 0 {
			return []int{ia}
		}
	}
	return nil
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
	r := &agRun{rec: new(impl.Recording), pytorch: lt == autograd.LifetimePyTorch, sizes: make([]int, 0, len(prog))}
	rt := impl.New(impl.Config{Faults: faults, Record: r.rec.Record})
	e, err := autograd.New(rt, autograd.Config{Record: r.rec.Record, Checkpoint: ckpt, Lifetime: lt})
	if err != nil {
		panic(err)
	}
	r.e = e
	_ = e.ScopeEnter()
	r.depth++
	if ckpt {
		// A checkpointed program starts from x, a leaf that requires
		// grad, c, one that does not, and y = x*c, which saves c: an
		// in-place op on c and a backward through y later restore it.
		for j, req := range []bool{true, false} {
			t, err := e.Leaf([]int{2}, []float64{1.5 - float64(j), 0.5}, req)
			if err != nil {
				return r.fail("RuntimeUse", 0, fmt.Sprintf("the checkpointed program's leaves: %v", err))
			}
			r.pool = append(r.pool, agTensor{t: t, group: r.newGroup(), leaf: true, depth: r.depth})
		}
		y, err := r.pool[0].t.Mul(r.pool[1].t)
		if err != nil {
			return r.fail("RuntimeUse", 0, fmt.Sprintf("the checkpointed program's y: %v", err))
		}
		r.pool = append(r.pool, agTensor{t: y, group: r.newGroup(), ins: []int{0, 1}, depth: r.depth})
	}
	for i, s := range prog {
		r.sizes = append(r.sizes, len(r.pool))
		k := ag.Kinds[s.Kind]
		c := &agCall{i: i, s: s, k: k}
		if len(r.pool) > 0 {
			ia, ib := ag.PoolIndex(s.A, len(r.pool)), ag.PoolIndex(s.B, len(r.pool))
			c.a, c.b, c.ia, c.ins = &r.pool[ia], &r.pool[ib], ia, agIns(k, ia, ib)
		} else if k.Op != ag.Leaf {
			continue // nothing to make it of
		}
		bug, err := agOps[k.Op](r, c)
		if bug == nil {
			bug = r.runtimeBug(i, err)
		}
		if bug != nil {
			return bug
		}
		if !r.pytorch {
			continue
		}
		for _, p := range r.pool {
			if !p.dropped && !p.closed && !p.t.Alive() {
				return r.fail("Held", i, fmt.Sprintf("%v: tensor %d was freed while the program holds it", s, p.t.ID()))
			}
		}
	}
	// Teardown: free every graph still alive (under PyTorch's lifetime,
	// End's to do), close every scope.
	for _, p := range r.pool {
		if !r.pytorch && p.t.Alive() && p.t.GradFn() != "" && !p.consumed {
			if bug := r.runtimeBug(len(prog), e.FreeGraph(p.t)); bug != nil {
				return bug
			}
		}
	}
	for ; r.depth > 0; r.depth-- {
		if bug := r.runtimeBug(len(prog), e.ScopeExit()); bug != nil {
			return bug
		}
	}
	if bug := r.runtimeBug(len(prog), e.End()); bug != nil {
		return bug
	}
	rep, err := model.Replay(r.rec.Source())
	if err != nil {
		return r.fail("Model", len(prog), fmt.Sprintf("the trace does not replay: %v", err))
	}
	if len(rep.Violations) > 0 {
		v := rep.Violations[0]
		f := r.fail("Model", len(prog), fmt.Sprintf("%s at event %d: %s", v.Kind, v.Event, v.Message))
		f.Kind = v.Kind
		return f
	}
	return nil
}
