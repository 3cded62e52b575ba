package autograd

import (
	"fmt"
	"math"
)

// Elementwise binary ops broadcast their operands as PyTorch does (see
// broadcastShape); an operand's gradient is summed over the elements it
// was broadcast to.

// Add returns a + b (AddBackward0; saves nothing).
func (a *Tensor) Add(b *Tensor) (*Tensor, error) {
	return a.binary("add", "AddBackward0", b, func(x, y float64) float64 { return x + y }, 0,
		func(g, _, _ float64) (float64, float64) { return g, g })
}

// Sub returns a - b (SubBackward0; saves nothing).
func (a *Tensor) Sub(b *Tensor) (*Tensor, error) {
	return a.binary("sub", "SubBackward0", b, func(x, y float64) float64 { return x - y }, 0,
		func(g, _, _ float64) (float64, float64) { return g, -g })
}

// Mul returns a * b (MulBackward0; saves b if a's gradient is wanted,
// then a if b's is, as PyTorch's formula needs (see edge); backward
// unpacks b first, as the current release's does).
func (a *Tensor) Mul(b *Tensor) (*Tensor, error) {
	return a.binary("mul", "MulBackward0", b, func(x, y float64) float64 { return x * y }, saveCross,
		func(g, x, y float64) (float64, float64) { return g * y, g * x })
}

// Div returns a / b (DivBackward0; saves b, and a if b's gradient is
// wanted; backward unpacks b first, as the current release's does). The divisor's gradient
// is PyTorch's formula, -g*((a/b)/b), rounding as it does.
func (a *Tensor) Div(b *Tensor) (*Tensor, error) {
	return a.binary("div", "DivBackward0", b, func(x, y float64) float64 { return x / y }, saveDiv,
		func(g, x, y float64) (float64, float64) { return g / y, -g * ((x / y) / y) })
}

// What a binary node saves.
const (
	saveCross = 1 // each operand if the other requires grad, the other operand first (mul)
	saveDiv   = 2 // the divisor, then the dividend if the divisor requires grad
)

func (a *Tensor) binary(op, name string, b *Tensor, f func(x, y float64) float64, saves int,
	df func(g, x, y float64) (float64, float64)) (*Tensor, error) {
	if err := first(a.use(op), b.use(op)); err != nil {
		return nil, err
	}
	shape, err := broadcastShape(op, a.id, a.shape, b.shape)
	if err != nil {
		return nil, err
	}
	x, y := a.read(), b.read()
	n := numel(shape)
	ix, iy := broadcastIndex(shape, a.shape), broadcastIndex(shape, b.shape)
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = f(x[ix[i]], y[iy[i]])
	}
	e := a.e
	out, err := e.result(op, shape, vals)
	if err != nil || !e.tracks(a, b) {
		return out, err
	}
	ia, ib := -1, -1
	nd := e.newNode(name, []*Tensor{a, b}, nil)
	nd.out, nd.redo = out, func(v [][]float64) []float64 {
		r := make([]float64, n)
		for i := range r {
			r[i] = f(v[0][ix[i]], v[1][iy[i]])
		}
		return r
	}
	switch saves {
	case saveCross:
		// The other operand first: the current release's MulBackward0
		// unpacks it before self, so that of the two, both modified, the
		// other is named (PyTorch 2.11; 1.13 unpacked self first).
		if a.edge() {
			ib, err = e.save(nd, b, false)
		}
		if b.edge() && err == nil {
			ia, err = e.save(nd, a, false)
		}
	case saveDiv:
		// The divisor first: the current release's DivBackward0 unpacks
		// it before the dividend, so that of the two, both modified, the
		// divisor is named (PyTorch 2.11; 1.13 unpacked the dividend first).
		ib, err = e.save(nd, b, false) // both formulas use it: saved whatever is wanted
		if b.edge() && err == nil {
			ia, err = e.save(nd, a, false)
		}
	}
	if err != nil {
		return nil, err
	}
	na, nb := a.Numel(), b.Numel()
	nd.apply = func(g []float64, sv [][]float64) [][]float64 {
		xs, ys := x, y // unused when saved values exist: the formula reads what was saved
		if ia >= 0 {
			xs = sv[ia]
		}
		if ib >= 0 {
			ys = sv[ib]
		}
		ga, gb := make([]float64, na), make([]float64, nb)
		for i := range g {
			da, db := df(g[i], xs[ix[i]], ys[iy[i]])
			ga[ix[i]] += da
			gb[iy[i]] += db
		}
		return [][]float64{ga, gb}
	}
	return out, e.attach(op, out, nd)
}

// edge reports whether t's gradient is wanted by a node that takes it:
// it requires grad and has a grad_fn or is a leaf that accumulates (a
// view made under NoGrad does not). PyTorch's generated code saves a
// tensor that only one input's formula uses, of an op with several
// differentiable inputs, only if that input's gradient is wanted
// (should_compute_output): mul's operands, div's dividend, mm's
// operands; the rest it saves whatever is wanted.
func (t *Tensor) edge() bool {
	return t.requiresGrad() && (t.fn() != nil || !t.noGradView)
}

// tracks reports whether an op on ins is recorded in the graph.
func (e *Engine) tracks(ins ...*Tensor) bool {
	if e.noGrad > 0 {
		return false
	}
	for _, t := range ins {
		if t.requiresGrad() {
			return true
		}
	}
	return false
}

// result makes an op's output tensor holding vals, outside any graph
// until attach puts it in one.
func (e *Engine) result(op string, shape []int, vals []float64) (*Tensor, error) {
	out, err := e.fresh(op, shape)
	if err != nil {
		return nil, err
	}
	out.write(vals)
	return out, nil
}

// unary applies f elementwise; what the node saves is its input (in) or
// its output (!in), and df gives the input's gradient from the output's,
// g, and x (input) or y (output), by PyTorch's formula.
func (a *Tensor) unary(op, name string, f func(float64) float64, savesInput bool, df func(g, x, y float64) float64) (*Tensor, error) {
	if err := a.use(op); err != nil {
		return nil, err
	}
	x := a.read()
	vals := make([]float64, len(x))
	for i := range x {
		vals[i] = f(x[i])
	}
	e := a.e
	out, err := e.result(op, a.shape, vals)
	if err != nil || !e.tracks(a) {
		return out, err
	}
	nd := e.newNode(name, []*Tensor{a}, nil)
	nd.out, nd.redo = out, func(v [][]float64) []float64 {
		r := make([]float64, len(v[0]))
		for i, x := range v[0] {
			r[i] = f(x)
		}
		return r
	}
	if df == nil { // saves nothing: the derivative is a constant
		nd.apply = func(g []float64, _ [][]float64) [][]float64 {
			ga := make([]float64, len(g))
			for i := range g {
				ga[i] = -g[i]
			}
			return [][]float64{ga}
		}
		return out, e.attach(op, out, nd)
	}
	if err := e.attach(op, out, nd); err != nil {
		return nil, err
	}
	s := a
	if !savesInput {
		s = out
	}
	if _, err := e.save(nd, s, !savesInput); err != nil {
		return nil, err
	}
	nd.apply = func(g []float64, sv [][]float64) [][]float64 {
		ga := make([]float64, len(g))
		for i := range g {
			if savesInput {
				ga[i] = df(g[i], sv[0][i], 0)
			} else {
				ga[i] = df(g[i], 0, sv[0][i])
			}
		}
		return [][]float64{ga}
	}
	return out, nil
}

// Neg returns -a (NegBackward0; saves nothing).
func (a *Tensor) Neg() (*Tensor, error) {
	return a.unary("neg", "NegBackward0", func(x float64) float64 { return -x }, true, nil)
}

// Pow returns a**c for a constant c (PowBackward0; saves a), computed as
// PyTorch's CPU kernel does (powScalar).
func (a *Tensor) Pow(c float64) (*Tensor, error) {
	return a.unary("pow", "PowBackward0", func(x float64) float64 { return powScalar(x, c) }, true,
		func(g, x, _ float64) float64 {
			if c == 0 {
				return 0 // zeros_like(self)
			}
			return g * (c * powScalar(x, c-1)) // pow_backward
		})
}

// powScalar is x**c as PyTorch's CPU kernel for a float64 tensor and a
// number computes it (Pow.cpp, PowKernel.cpp): 0 and 1 are a fill and a
// copy, 0.5, -0.5 and -1 are sqrt, rsqrt and reciprocal, 2, 3 and -2 are
// products; the rest std::pow. The specializations differ from pow where
// it matters to a differential check: (-inf)**0.5 is NaN, not +inf.
func powScalar(x, c float64) float64 {
	switch c {
	case 0:
		return 1
	case 1:
		return x
	case 0.5:
		return math.Sqrt(x)
	case -0.5:
		return 1 / math.Sqrt(x)
	case -1:
		return 1 / x
	case 2:
		return x * x
	case 3:
		return x * x * x
	case -2:
		return 1 / (x * x)
	}
	return math.Pow(x, c)
}

// Relu returns max(a, 0) (ReluBackward0; saves its output). Its gradient
// is PyTorch's threshold_backward, a selection: where the output is not
// positive the gradient is 0, even an infinite or NaN one.
func (a *Tensor) Relu() (*Tensor, error) {
	return a.unary("relu", "ReluBackward0", relu, false,
		func(g, _, y float64) float64 {
			if y <= 0 {
				return 0
			}
			return g
		})
}

// relu is PyTorch's CPU relu of one element, clamp_min's max(x, 0): x
// unless x < 0, so that -0 stays -0 (1 / relu(-0.) is -inf) and NaN NaN.
func relu(x float64) float64 {
	if x < 0 {
		return 0
	}
	return x
}

// Exp returns e**a (ExpBackward0; saves its output).
func (a *Tensor) Exp() (*Tensor, error) {
	return a.unary("exp", "ExpBackward0", math.Exp, false, func(g, _, y float64) float64 { return g * y })
}

// Log returns ln a (LogBackward0; saves a).
func (a *Tensor) Log() (*Tensor, error) {
	return a.unary("log", "LogBackward0", math.Log, true, func(g, x, _ float64) float64 { return g / x })
}

// Tanh returns tanh a (TanhBackward0; saves its output).
func (a *Tensor) Tanh() (*Tensor, error) {
	return a.unary("tanh", "TanhBackward0", math.Tanh, false, func(g, _, y float64) float64 { return g * (1 - y*y) })
}

// Sum returns the sum of a's elements, a tensor of shape [] (SumBackward0;
// saves nothing), added in PyTorch's order (see sum).
func (a *Tensor) Sum() (*Tensor, error) {
	if err := a.use("sum"); err != nil {
		return nil, err
	}
	e := a.e
	out, err := e.result("sum", []int{}, []float64{sum(a.read())})
	if err != nil || !e.tracks(a) {
		return out, err
	}
	n := a.Numel()
	nd := e.newNode("SumBackward0", []*Tensor{a}, func(g []float64, _ [][]float64) [][]float64 {
		ga := make([]float64, n)
		for i := range ga {
			ga[i] = g[0]
		}
		return [][]float64{ga}
	})
	nd.out, nd.redo = out, func(v [][]float64) []float64 { return []float64{sum(v[0])} }
	return out, e.attach("sum", out, nd)
}

// Matmul returns the matrix product of a [n,k] and b [k,m] (MmBackward0;
// saves b if a's gradient is wanted and a if b's is; see edge).
func (a *Tensor) Matmul(b *Tensor) (*Tensor, error) {
	if err := first(a.use("matmul"), b.use("matmul")); err != nil {
		return nil, err
	}
	switch {
	case len(a.shape) != 2:
		return nil, &Error{Op: "matmul", Tensor: a.id, Msg: "self must be a matrix"}
	case len(b.shape) != 2:
		return nil, &Error{Op: "matmul", Tensor: b.id, Msg: "mat2 must be a matrix"}
	case a.shape[1] != b.shape[0]:
		return nil, &Error{Op: "matmul", Tensor: a.id, Msg: fmt.Sprintf("mat1 and mat2 shapes cannot be multiplied (%s and %s)", dimsX(a.shape), dimsX(b.shape))}
	}
	n, k, m := a.shape[0], a.shape[1], b.shape[1]
	x, y := a.read(), b.read()
	e := a.e
	out, err := e.result("matmul", []int{n, m}, mm(x, y, n, k, m, false, false))
	if err != nil || !e.tracks(a, b) {
		return out, err
	}
	nd := e.newNode("MmBackward0", []*Tensor{a, b}, nil)
	nd.out, nd.redo = out, func(v [][]float64) []float64 { return mm(v[0], v[1], n, k, m, false, false) }
	ia, ib := -1, -1
	if b.edge() {
		ia, err = e.save(nd, a, false)
	}
	if a.edge() && err == nil {
		ib, err = e.save(nd, b, false)
	}
	if err != nil {
		return nil, err
	}
	nd.apply = func(g []float64, sv [][]float64) [][]float64 {
		var ga, gb []float64
		if ib >= 0 {
			ga = mm(g, sv[ib], n, m, k, false, true) // g [n,m] x bᵀ [m,k]
		}
		if ia >= 0 {
			gb = mm(sv[ia], g, k, n, m, true, false) // aᵀ [k,n] x g [n,m]
		}
		return [][]float64{ga, gb}
	}
	return out, e.attach("matmul", out, nd)
}

// mm multiplies p [r,q] by s [q,c], either read transposed (stored as
// [q,r] or [c,q]).
func mm(p, s []float64, r, q, c int, tp, ts bool) []float64 {
	out := make([]float64, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			sum := 0.0
			for l := 0; l < q; l++ {
				pv := p[i*q+l]
				if tp {
					pv = p[l*r+i]
				}
				sv := s[l*c+j]
				if ts {
					sv = s[j*q+l]
				}
				sum += pv * sv
			}
			out[i*c+j] = sum
		}
	}
	return out
}
