package autograd

import (
	"math"
	"math/rand/v2"
	"slices"

	shapes "github.com/tlcheck/tlcheck/internal/shape"
)

// Generate returns a random layer-5 program: leaves of small
// shapes, every op, views, in-place ops with and without no_grad, detach
// and .data, backward with and without retain_graph, zero_grad,
// retain_grad and drop, ending with end. It follows the shapes it makes,
// so that most calls are ones PyTorch takes; some are not (a shape that
// does not broadcast, an in-place op on a leaf, a backward twice), and
// those are the interesting ones. The same rng state gives the same
// program.
func Generate(rng *rand.Rand) []Call {
	g := tensorGen{rng: rng}
	n := 4 + rng.IntN(28)
	for range n {
		g.step()
	}
	g.calls = append(g.calls, Call{Op: End})
	return g.calls
}

// genShapes are the shapes of leaves: the zero-dimensional one, and
// one-element shapes of every rank beside larger ones, where broadcasting
// has its corners.
var genShapes = [][]int{{}, {1}, {3}, {2}, {2, 3}, {1, 3}, {3, 1}, {1, 1}, {2, 1}}

// genValues are the values of leaves: small, of both signs, with zero
// (log, div) and one.
var genValues = []float64{-2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3}

type genTensor struct {
	handle int
	shape  []int // nil: not known (the call that made it may be refused)
	grad   bool  // requires grad, as far as the generator knows
	view   bool  // a slice or a reshape: a write through it is a write of its base
	family int   // views of one another (slices, reshapes) are of one family
	// A view made under no_grad (or a view of one) of a tensor that
	// requires grad is written in place (PyTorch refuses it with grad mode
	// on) but never an operand: see operand.
	noGradView bool
}

type tensorGen struct {
	rng   *rand.Rand
	calls []Call
	live  []genTensor
	next  int
	// from says, for each family, the families its values were computed
	// from directly (an in-place op by a tensor adds one): its graph may
	// have saved them, and theirs what they were computed from, even later
	// (a saved tensor keeps its current grad_fn). See computedFrom.
	from map[int]map[int]bool
}

// family returns the family of what c makes: its operand's for a view, a
// new one else.
func (g *tensorGen) family(c Call) int {
	switch c.Op {
	case Slice, Reshape:
		for _, t := range g.live {
			if t.handle == c.A {
				return t.family
			}
		}
	}
	return c.Handle
}

func (g *tensorGen) handle() int { g.next++; return g.next }

func (g *tensorGen) pick() genTensor { return g.live[g.rng.IntN(len(g.live))] }

// operand returns a live tensor to compute from: any but a view made
// under no_grad. PyTorch gives such a view, though it requires grad, no
// edge to a gradient accumulator, and a node that saves it trips an
// internal assert of PyTorch's (1.13: "No grad accumulator for a saved
// leaf") at backward when saved-tensor hooks are on, as they are in the
// PyTorch driver's observing world; without hooks PyTorch drops that
// gradient silently. Neither world can then follow the other.
func (g *tensorGen) operand() genTensor {
	for range 6 {
		if t := g.pick(); !t.noGradView {
			return t
		}
	}
	for _, t := range g.live {
		if !t.noGradView {
			return t
		}
	}
	g.leaf()
	return g.live[len(g.live)-1]
}

// pickWith returns a live tensor ok accepts, if a few tries find one.
func (g *tensorGen) pickWith(ok func(genTensor) bool) (genTensor, bool) {
	for range 6 {
		if t := g.pick(); ok(t) {
			return t, true
		}
	}
	return genTensor{}, false
}

func (g *tensorGen) add(c Call, shape []int, grad bool) {
	if g.rng.IntN(8) == 0 {
		c.NoGrad = true
		grad = grad && c.Op == Leaf
	}
	g.calls = append(g.calls, c)
	if c.Op.Makes() && (shape != nil || g.rng.IntN(4) == 0) {
		g.made(c, shape, grad)
	}
}

// made adds the tensor c makes to the live ones, with its family.
func (g *tensorGen) made(c Call, shape []int, grad bool) genTensor {
	t := genTensor{handle: c.Handle, shape: shape, grad: grad,
		view: c.Op == Slice || c.Op == Reshape, family: g.family(c)}
	if t.view {
		for _, x := range g.live {
			if x.handle == c.A {
				t.noGradView = c.NoGrad && x.grad || x.noGradView
			}
		}
	}
	if t.family == c.Handle { // a new family: computed from its operands'
		from := map[int]bool{}
		if c.Op != Detach && c.Op != Data { // those cut the graph
			for _, x := range g.live {
				if x.handle == c.A || x.handle == c.B {
					from[x.family] = true
				}
			}
		}
		if g.from == nil {
			g.from = map[int]map[int]bool{}
		}
		g.from[t.family] = from
	}
	g.live = append(g.live, t)
	return t
}

func (g *tensorGen) leaf() {
	shape := genShapes[g.rng.IntN(len(genShapes))]
	values := make([]float64, shapes.Numel(shape))
	for i := range values {
		values[i] = genValues[g.rng.IntN(len(genValues))]
		if g.rng.IntN(200) == 0 {
			values[i] = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[g.rng.IntN(3)]
		}
	}
	rg := g.rng.IntN(10) < 7
	g.add(Call{Op: Leaf, Handle: g.handle(), Shape: slices.Clone(shape), Values: values, RequiresGrad: rg}, shape, rg)
}

func (g *tensorGen) step() {
	if len(g.live) < 2 || g.rng.IntN(8) == 0 {
		g.leaf()
		return
	}
	r := g.rng
	switch k := r.IntN(100); {
	case k < 22: // a binary op, mostly of shapes that broadcast
		a := g.operand()
		b, ok := g.pickWith(func(b genTensor) bool { return !b.noGradView && broadcast(a.shape, b.shape) != nil })
		if !ok || r.IntN(10) == 0 {
			b = g.operand()
		}
		ops := []Op{Add, Sub, Mul, Div, Mul, Add}
		op := ops[r.IntN(len(ops))]
		shape := broadcast(a.shape, b.shape)
		if r.IntN(6) == 0 {
			if m, ok := g.pickWith(func(m genTensor) bool { return !m.noGradView && matmulShape(a.shape, m.shape) != nil }); ok && r.IntN(4) > 0 {
				b = m
			}
			op, shape = Matmul, matmulShape(a.shape, b.shape)
		}
		g.add(Call{Op: op, Handle: g.handle(), A: a.handle, B: b.handle}, shape, a.grad || b.grad)
	case k < 36: // a unary op
		a := g.operand()
		ops := []Op{Neg, Exp, Log, Tanh, Relu, Sum, Pow, Tanh}
		c := Call{Op: ops[r.IntN(len(ops))], Handle: g.handle(), A: a.handle}
		shape := a.shape
		switch c.Op {
		case Sum:
			shape = []int{}
		case Pow:
			c.Exponent = []float64{2, 3, 0.5, -1, 1}[r.IntN(5)]
		}
		g.add(c, shape, a.grad)
	case k < 48: // a view or an alias
		a := g.pick()
		c := Call{Handle: g.handle(), A: a.handle}
		shape := a.shape
		switch r.IntN(5) {
		case 0, 1:
			c.Op = Slice
			n := 3
			if len(a.shape) > 0 {
				n = a.shape[0]
			}
			c.Start = r.IntN(max(n, 1))
			c.Stop = c.Start + 1 + r.IntN(max(n-c.Start, 1))
			if a.shape != nil && len(a.shape) > 0 {
				shape = append([]int{min(c.Stop, n) - c.Start}, a.shape[1:]...)
			} else {
				shape = nil
			}
		case 2:
			c.Op = Reshape
			c.Shape = reshapeTo(r, a.shape)
			shape = c.Shape
			if a.shape != nil && shapes.Numel(a.shape) != shapes.Numel(c.Shape) {
				shape = nil
			}
		case 3:
			c.Op = Detach
		default:
			c.Op = Data
		}
		g.add(c, shape, a.grad && (c.Op == Slice || c.Op == Reshape))
	case k < 68: // in place, often through a view. Never by a tensor computed
		// from the one written (itself, a view of one base with it, or what
		// an op made of them): PyTorch leaks such a graph, its operand's
		// saved tensor referring to the node that saved it through its
		// grad_fn, a cycle of C++ objects nothing frees. The model reports
		// that leak at end, rightly; TestTorchSelfAliasedLeak keeps the
		// finding, and the generated programs go round it.
		t := g.pick()
		if v, ok := g.pickWith(func(v genTensor) bool { return v.view }); ok && r.IntN(5) < 2 {
			t = v
		}
		c := Call{Target: t.handle}
		ops := []Op{AddInPlace, SubInPlace, MulInPlace, DivInPlace, MulInPlace, AddInPlace}
		c.Op = ops[r.IntN(len(ops))]
		switch {
		case r.IntN(10) == 0:
			c.Op = Zero
		case (c.Op == AddInPlace || c.Op == MulInPlace) && r.IntN(3) == 0:
			c.ByScalar, c.Scalar = true, genValues[r.IntN(len(genValues))]
		default:
			b, ok := g.pickWith(func(b genTensor) bool { return !b.noGradView && slices.Equal(broadcast(t.shape, b.shape), t.shape) })
			if !ok || r.IntN(10) == 0 {
				b = g.operand()
			}
			if g.computedFrom(b.family, t.family) {
				// PyTorch would leak this graph (see TestTorchSelfAliasedLeak):
				// by a number instead.
				c.ByScalar, c.Scalar = true, 2
				c.Op = MulInPlace
				break
			}
			c.B = b.handle
			if g.from[t.family] != nil {
				g.from[t.family][b.family] = true
			}
		}
		if r.IntN(4) == 0 {
			c.NoGrad = true
		}
		g.calls = append(g.calls, c)
	case k < 84: // backward, mostly of a sum made for it, mostly of what requires grad
		t := g.operand()
		if x, ok := g.pickWith(func(x genTensor) bool { return !x.noGradView && x.grad }); ok && r.IntN(4) > 0 {
			t = x
		}
		if t.shape == nil || shapes.Numel(t.shape) != 1 || r.IntN(3) == 0 {
			s := Call{Op: Sum, Handle: g.handle(), A: t.handle}
			g.calls = append(g.calls, s)
			t = g.made(s, []int{}, t.grad)
		}
		g.calls = append(g.calls, Call{Op: Backward, Target: t.handle, RetainGraph: r.IntN(5) < 2})
		if r.IntN(3) == 0 { // and again, as a training loop's mistake would
			g.calls = append(g.calls, Call{Op: Backward, Target: t.handle, RetainGraph: r.IntN(3) == 0})
		}
	case k < 90:
		ops := []Op{ZeroGrad, RetainGrad}
		g.calls = append(g.calls, Call{Op: ops[r.IntN(2)], Target: g.pick().handle})
	default: // the program lets go of a tensor
		i := r.IntN(len(g.live))
		g.calls = append(g.calls, Call{Op: Drop, Target: g.live[i].handle})
		g.live = slices.Delete(g.live, i, i+1)
	}
}

// computedFrom reports whether family f is family t, or was computed from
// it, directly or through others, as the program stands now.
func (g *tensorGen) computedFrom(f, t int) bool {
	seen := map[int]bool{}
	var walk func(int) bool
	walk = func(f int) bool {
		if f == t {
			return true
		}
		if seen[f] {
			return false
		}
		seen[f] = true
		for d := range g.from[f] {
			if walk(d) {
				return true
			}
		}
		return false
	}
	return walk(f)
}

// broadcast returns the shape PyTorch's broadcasting gives a and b, or
// nil if they do not broadcast or either is unknown.
func broadcast(a, b []int) []int {
	if a == nil || b == nil {
		return nil
	}
	out, _ := shapes.Broadcast(a, b)
	return out
}

// matmulShape returns the shape of a @ b for ranks 1 and 2, or nil.
func matmulShape(a, b []int) []int {
	out, _ := shapes.Matmul(a, b)
	return out
}

// reshapeTo picks a shape of as many elements as shape, mostly.
func reshapeTo(r *rand.Rand, shape []int) []int {
	var fits [][]int
	for _, s := range genShapes {
		if shape != nil && shapes.Numel(s) == shapes.Numel(shape) {
			fits = append(fits, s)
		}
	}
	if n := shapes.Numel(shape); shape != nil && n > 1 {
		fits = append(fits, []int{n})
	}
	if len(fits) == 0 || r.IntN(12) == 0 {
		return slices.Clone(genShapes[r.IntN(len(genShapes))])
	}
	return slices.Clone(fits[r.IntN(len(fits))])
}
