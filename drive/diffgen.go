package drive

import (
	"math/rand/v2"
	"slices"
)

// GenerateTensorProgram returns a random layer-5 program of 4 to 20
// calls and end: leaves of small shapes (zero-dimensional among them),
// every op, views and their in-place writes, in-place ops by a tensor
// and by a number, with and without no_grad, detach, .data, backward
// with and without retain_graph, zero_grad, retain_grad and drops.
//
// The generator keeps the shapes of the tensors made, so that most calls
// are ones PyTorch does (operands broadcast, matrices fit), with a few
// that it refuses for their shapes (matmul's operands are matrices, as
// torch.mm's); a call that a driver may refuse for
// its history (an in-place op on a leaf, a second backward) is drawn
// freely, but one that makes a tensor is drawn only where PyTorch makes
// it, so that every handle a call names was made: a view made under
// no_grad, which PyTorch refuses to use with grad mode on once its base
// was written in place, is used under no_grad only.
func GenerateTensorProgram(r *rand.Rand) []TensorCall {
	g := tensorGen{r: r, next: 1}
	n := 4 + r.IntN(17)
	for range n {
		g.step()
	}
	return append(g.calls, TensorCall{Op: TensorEnd})
}

// genTensor is what the generator knows of a tensor a program holds.
type genTensor struct {
	handle     int
	shape      []int
	noGradView bool // made by a view under no_grad, or a view of one
}

type tensorGen struct {
	r     *rand.Rand
	calls []TensorCall
	held  []genTensor
	next  int
}

var genShapes = [][]int{{}, {1}, {2}, {3}, {1, 1}, {2, 2}, {2, 3}, {3, 1}, {1, 3}, {3, 2}}

// pick returns a held tensor, a recent one more often.
func (g *tensorGen) pick() genTensor {
	n := len(g.held)
	if n > 3 && g.r.IntN(3) < 2 {
		return g.held[n-1-g.r.IntN(3)]
	}
	return g.held[g.r.IntN(n)]
}

// pickFor returns a held tensor that broadcasts with shape, if it finds
// one in a few draws, else any.
func (g *tensorGen) pickFor(shape []int) genTensor {
	for range 6 {
		if t := g.pick(); broadcasts(shape, t.shape) {
			return t
		}
	}
	return g.pick()
}

func (g *tensorGen) value() float64 {
	switch g.r.IntN(12) {
	case 0:
		return 0
	case 1:
		return 1
	}
	return float64(g.r.IntN(601)-300) / 100
}

func (g *tensorGen) leaf() {
	shape := genShapes[g.r.IntN(len(genShapes))]
	vals := make([]float64, numel(shape))
	for i := range vals {
		vals[i] = g.value()
	}
	g.made(TensorCall{Op: TensorLeaf, Shape: slices.Clone(shape), Values: vals, RequiresGrad: g.r.IntN(5) < 3}, shape, false)
}

// made appends c, which makes a tensor of shape (nil: none, PyTorch
// refuses it) under the next handle.
func (g *tensorGen) made(c TensorCall, shape []int, noGradView bool) {
	c.Handle = g.next
	g.next++
	g.calls = append(g.calls, c)
	if shape != nil {
		g.held = append(g.held, genTensor{handle: c.Handle, shape: shape, noGradView: noGradView})
	}
}

func (g *tensorGen) step() {
	if len(g.held) == 0 || g.r.IntN(7) == 0 {
		g.leaf()
		return
	}
	noGrad := g.r.IntN(7) == 0
	a := g.pick()
	// A call that makes a tensor from a view made under no_grad runs
	// under no_grad too: PyTorch refuses it otherwise once the view's
	// base was written in place, which a program's shapes do not tell.
	uses := func(ts ...genTensor) bool {
		for _, t := range ts {
			if t.noGradView {
				return true
			}
		}
		return false
	}
	switch k := g.r.IntN(100); {
	case k < 22: // a binary op
		op := []TensorOp{TensorAdd, TensorSub, TensorMul, TensorDiv, TensorMatmul}[g.r.IntN(5)]
		b := g.pickFor(a.shape)
		var shape []int
		if op == TensorMatmul {
			// Matrices only: a @ b of a vector is another op in PyTorch
			// (DotBackward0, MvBackward0), which the calls leave out.
			b = genTensor{}
			for range 6 {
				if c := g.pick(); len(c.shape) == 2 && (len(b.shape) != 2 || len(a.shape) == 2 && c.shape[0] == a.shape[1]) {
					b = c
				}
			}
			if len(a.shape) != 2 || len(b.shape) != 2 {
				op, b = TensorMul, a
			}
			if op == TensorMatmul && a.shape[1] == b.shape[0] {
				shape = []int{a.shape[0], b.shape[1]}
			}
		}
		if op != TensorMatmul && broadcasts(a.shape, b.shape) {
			shape = broadcastShape(a.shape, b.shape)
		}
		g.made(TensorCall{Op: op, A: a.handle, B: b.handle, NoGrad: noGrad || uses(a, b)}, shape, false)
	case k < 38: // a unary op
		op := []TensorOp{TensorNeg, TensorExp, TensorLog, TensorTanh, TensorRelu, TensorSum, TensorPow}[g.r.IntN(7)]
		c := TensorCall{Op: op, A: a.handle, NoGrad: noGrad || uses(a)}
		shape := a.shape
		if op == TensorSum {
			shape = []int{}
		}
		if op == TensorPow {
			c.Exponent = []float64{2, 3, 0.5, -1, 0, 1.5}[g.r.IntN(6)]
		}
		g.made(c, slices.Clone(shape), false)
	case k < 52: // a view, detach or .data
		if a.noGradView {
			noGrad = true
		}
		switch g.r.IntN(4) {
		case 0, 1:
			if len(a.shape) > 0 && g.r.IntN(2) == 0 {
				start := g.r.IntN(a.shape[0])
				stop := start + 1 + g.r.IntN(a.shape[0]-start)
				shape := append([]int{stop - start}, a.shape[1:]...)
				g.made(TensorCall{Op: TensorSlice, A: a.handle, Start: start, Stop: stop, NoGrad: noGrad}, shape, noGrad || a.noGradView)
				return
			}
			shape := reshapes(a.shape)[g.r.IntN(len(reshapes(a.shape)))]
			g.made(TensorCall{Op: TensorReshape, A: a.handle, Shape: shape, NoGrad: noGrad}, slices.Clone(shape), noGrad || a.noGradView)
		case 2:
			g.made(TensorCall{Op: TensorDetach, A: a.handle, NoGrad: noGrad}, slices.Clone(a.shape), false)
		default:
			g.made(TensorCall{Op: TensorData, A: a.handle, NoGrad: noGrad}, slices.Clone(a.shape), false)
		}
	case k < 74: // an in-place op
		if a.noGradView {
			// PyTorch refuses it with grad mode on; under no_grad it
			// writes, and then refuses to tell the view's grad_fn (its
			// answer's), which the protocol has no field for.
			noGrad = false
		}
		c := TensorCall{Op: []TensorOp{TensorAddInPlace, TensorSubInPlace, TensorMulInPlace, TensorDivInPlace, TensorZero}[g.r.IntN(5)], Target: a.handle, NoGrad: noGrad}
		if c.Op != TensorZero {
			if g.r.IntN(3) == 0 {
				c.ByScalar, c.Scalar = true, []float64{2.5, -1, 0.5, 2}[g.r.IntN(4)]
			} else {
				c.B = g.pickFor(a.shape).handle
			}
		}
		g.calls = append(g.calls, c)
	case k < 88: // backward, a scalar root most often
		t := a
		for range 4 {
			if numel(t.shape) == 1 {
				break
			}
			t = g.pick()
		}
		g.calls = append(g.calls, TensorCall{Op: TensorBackward, Target: t.handle, RetainGraph: g.r.IntN(3) == 0, NoGrad: noGrad && g.r.IntN(3) == 0})
	case k < 92:
		g.calls = append(g.calls, TensorCall{Op: TensorZeroGrad, Target: a.handle, NoGrad: noGrad})
	case k < 95:
		g.calls = append(g.calls, TensorCall{Op: TensorRetainGrad, Target: a.handle, NoGrad: noGrad})
	default:
		g.calls = append(g.calls, TensorCall{Op: TensorDrop, Target: a.handle})
		g.held = slices.DeleteFunc(g.held, func(t genTensor) bool { return t.handle == a.handle })
	}
}

// reshapes returns the shapes a tensor of shape may be reshaped to.
func reshapes(shape []int) [][]int {
	n := numel(shape)
	out := [][]int{{n}, {n, 1}, {1, n}}
	if n == 1 {
		out = append(out, []int{})
	}
	if n == 6 {
		out = append(out, []int{2, 3}, []int{3, 2})
	}
	if n == 4 {
		out = append(out, []int{2, 2})
	}
	return out
}

// broadcasts reports whether shapes a and b broadcast (PyTorch's rules).
func broadcasts(a, b []int) bool {
	for i := 1; i <= min(len(a), len(b)); i++ {
		x, y := a[len(a)-i], b[len(b)-i]
		if x != y && x != 1 && y != 1 {
			return false
		}
	}
	return true
}

// broadcastShape is the shape a and b broadcast to.
func broadcastShape(a, b []int) []int {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := 1; i <= n; i++ {
		x, y := 1, 1
		if i <= len(a) {
			x = a[len(a)-i]
		}
		if i <= len(b) {
			y = b[len(b)-i]
		}
		out[n-i] = max(x, y)
	}
	return out
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}
