package autograd

import (
	"errors"
	"testing"
)

// The tests of this file hold the runtime to what PyTorch does, program
// by program (issue 20). Each states a program in PyTorch's terms and
// what PyTorch 1.13 did with it, recorded once; they run without PyTorch.

// refusal returns err's message, failing t unless err is an *Error.
func refusal(t *testing.T, err error) string {
	t.Helper()
	var ae *Error
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want a refusal (*Error)", err)
	}
	return ae.Msg
}

// TestPyTorchViewAfterBaseInPlace: a view's grad_fn is made anew after an
// in-place op on its base, so the gradient flows through that op.
//
//	w = torch.tensor([1., 2, 3], requires_grad=True)
//	h = w * 1; v = h[0:2]; h.mul_(3)
//	v.grad_fn          # <AsStridedBackward0>
//	v.sum().backward()
//	w.grad             # tensor([3., 3., 0.])
func TestPyTorchViewAfterBaseInPlace(t *testing.T) {
	m := must[*Tensor](t)
	e := env(t)
	w := leaf(t, e, true, 1, 2, 3)
	h := m(w.Mul(m(e.Scalar(1))))
	v := m(h.Slice(0, 2))
	if got := v.GradFn(); got != "SliceBackward0" {
		t.Errorf("v.grad_fn %s before the in-place op, want SliceBackward0", got)
	}
	if err := h.MulInPlace(3); err != nil {
		t.Fatal(err)
	}
	if got := v.GradFn(); got != "AsStridedBackward0" {
		t.Errorf("v.grad_fn %s after h.mul_(3), want AsStridedBackward0", got)
	}
	if err := m(v.Sum()).Backward(false); err != nil {
		t.Fatal(err)
	}
	if g := values(t, w.Grad()); !near(g, []float64{3, 3, 0}) {
		t.Errorf("w.grad %v, want [3 3 0]", g)
	}
}

// TestPyTorchSavedViewNamed: a saved view of a base written in place is
// named by its grad_fn made anew.
//
//	w = torch.tensor([1., 2, 3], requires_grad=True)
//	h = w * 1; v = h[0:2]; y = v * v; h.mul_(3)
//	y.sum().backward()   # RuntimeError: ... [torch.DoubleTensor [2]], which is output 0 of AsStridedBackward0, is at version 1; expected version 0 instead. ...
func TestPyTorchSavedViewNamed(t *testing.T) {
	m := must[*Tensor](t)
	e := env(t)
	w := leaf(t, e, true, 1, 2, 3)
	h := m(w.Mul(m(e.Scalar(1))))
	v := m(h.Slice(0, 2))
	y := m(v.Mul(v))
	if err := h.MulInPlace(3); err != nil {
		t.Fatal(err)
	}
	got := refusal(t, m(y.Sum()).Backward(false))
	want := "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.DoubleTensor [2]], which is output 0 of AsStridedBackward0, is at version 1; expected version 0 instead." + msgModifiedHint
	if got != want {
		t.Errorf("message:\n got %s\nwant %s", got, want)
	}
}

// TestViewMadeAnewFreesOldGraph: hybrid cleanup after a view's grad_fn
// is made anew. r2 = r1.reshape(3), r1 = w.reshape(3): once w is written
// under NoGrad, r2's grad_fn is AsStridedBackward0 of w, and r1 is no
// longer upstream of it for the gradient; freeing r2's graph must still
// free r1, the view r2 was made through, or it leaks (found by
// FuzzAutogradProgram's body as a leak at end).
func TestViewMadeAnewFreesOldGraph(t *testing.T) {
	m := must[*Tensor](t)
	e := env(t)
	w := leaf(t, e, true, 1, 2, 3)
	r1 := m(w.Reshape(3))
	r2 := m(r1.Reshape(3))
	if err := e.NoGrad(func() error { return w.MulInPlace(0) }); err != nil {
		t.Fatal(err)
	}
	if got := r2.GradFn(); got != "AsStridedBackward0" {
		t.Errorf("r2.grad_fn %s, want AsStridedBackward0", got)
	}
	if err := e.FreeGraph(r2); err != nil {
		t.Fatal(err)
	}
	if r1.Alive() || r2.Alive() {
		t.Errorf("after FreeGraph(r2): r1 alive %t, r2 alive %t, want both freed", r1.Alive(), r2.Alive())
	}
}

// TestPyTorchRefusals: what PyTorch refuses, in its words. Each case is
// the program in PyTorch's terms and what PyTorch 1.13 raised.
func TestPyTorchRefusals(t *testing.T) {
	tensor := func(t *testing.T, e *Engine, shape []int, req bool, vals ...float64) *Tensor {
		return must[*Tensor](t)(e.Leaf(shape, vals, req))
	}
	cases := []struct {
		torch string
		run   func(t *testing.T, e *Engine) error
		want  string
	}{
		{"h = w + w; h.mul_(2.0); y = h.sum(); y.backward(); y.backward()", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2)
			h := m(w.Add(w))
			if err := h.MulInPlace(2); err != nil {
				return err
			}
			y := m(h.Sum())
			if err := y.Backward(false); err != nil {
				return err
			}
			return y.Backward(false) // mul_ saved the wrapped number 2.0
		}, MsgSecondBackward},
		{"x = torch.ones(3); x.add_(torch.tensor([[2.]]))", func(t *testing.T, e *Engine) error {
			return leaf(t, e, false, 1, 1, 1).AddInPlace(tensor(t, e, []int{1, 1}, false, 2), 1)
		}, "output with shape [3] doesn't match the broadcast shape [1, 3]"},
		{"x = torch.tensor(1.); x.add_(torch.tensor([2.]))", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			return m(e.Scalar(1)).AddInPlace(leaf(t, e, false, 2), 1)
		}, "output with shape [] doesn't match the broadcast shape [1]"},
		{"torch.ones(2, 3) * torch.ones(2)", func(t *testing.T, e *Engine) error {
			_, err := tensor(t, e, []int{2, 3}, false, 1, 1, 1, 1, 1, 1).Mul(leaf(t, e, false, 1, 1))
			return err
		}, "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1"},
		{"torch.mm(torch.ones(3), torch.ones(3, 1))", func(t *testing.T, e *Engine) error {
			_, err := leaf(t, e, false, 1, 1, 1).Matmul(tensor(t, e, []int{3, 1}, false, 1, 1, 1))
			return err
		}, "self must be a matrix"},
		{"torch.mm(torch.ones(1, 3), torch.ones(3))", func(t *testing.T, e *Engine) error {
			_, err := tensor(t, e, []int{1, 3}, false, 1, 1, 1).Matmul(leaf(t, e, false, 1, 1, 1))
			return err
		}, "mat2 must be a matrix"},
		{"torch.mm(torch.ones(1, 3), torch.ones(1, 3))", func(t *testing.T, e *Engine) error {
			_, err := tensor(t, e, []int{1, 3}, false, 1, 1, 1).Matmul(tensor(t, e, []int{1, 3}, false, 1, 1, 1))
			return err
		}, "mat1 and mat2 shapes cannot be multiplied (1x3 and 1x3)"},
		{"x = torch.ones(4); x.add_(x[2:3])", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			x := leaf(t, e, false, 1, 1, 1, 1)
			return x.AddInPlace(m(x.Slice(2, 3)), 1)
		}, MsgOverlap},
		{"t = torch.ones(1); t.reshape(1, 1).add_(t)", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			x := leaf(t, e, false, 1)
			return m(x.Reshape(1, 1)).AddInPlace(x, 1)
		}, MsgOverlap},
		{"w = torch.ones(4, requires_grad=True); w[0:4].add_(w[2:3]): check_inplace first", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 1, 1, 1)
			return m(w.Slice(0, 4)).AddInPlace(m(w.Slice(2, 3)), 1)
		}, MsgLeafViewInPlace},
		{"with torch.no_grad(): v = w[0:2]\nv.mul_(2)", func(t *testing.T, e *Engine) error {
			w := leaf(t, e, true, 1, 2, 3)
			var v *Tensor
			if err := e.NoGrad(func() (err error) { v, err = w.Slice(0, 2); return err }); err != nil {
				return err
			}
			return v.MulInPlace(2)
		}, MsgNoGradViewInPlace},
		{"h = w * 2; v = h[1:3]; v.mul_(3); y = h.log(); v.add_(1); y.sum().backward()", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2, 3)
			h := m(w.Mul(m(e.Scalar(2))))
			v := m(h.Slice(1, 3))
			if err := v.MulInPlace(3); err != nil {
				return err
			}
			y := m(h.Log())
			if err := v.AddScalarInPlace(1); err != nil {
				return err
			}
			return m(y.Sum()).Backward(false)
		}, "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.DoubleTensor [3]], which is output 0 of torch::autograd::CopySlices, is at version 2; expected version 1 instead." + msgModifiedHint},
		{"with torch.no_grad(): v = w[0:1]\ny = v.pow(2).sum(); y.backward(); y.backward(): an op of one input saves it, wanted or not", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2)
			var v *Tensor
			if err := e.NoGrad(func() (err error) { v, err = w.Slice(0, 1); return err }); err != nil {
				return err
			}
			y := m(m(v.Pow(2)).Sum())
			if err := y.Backward(false); err != nil {
				return err
			}
			return y.Backward(false)
		}, MsgSecondBackward},
		{"with torch.no_grad(): v = w[0:1]\ny = (v / torch.tensor([2.])).sum(); y.backward(); y.backward(): div saves its divisor, wanted or not", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2)
			var v *Tensor
			if err := e.NoGrad(func() (err error) { v, err = w.Slice(0, 1); return err }); err != nil {
				return err
			}
			y := m(m(v.Div(leaf(t, e, false, 2))).Sum())
			if err := y.Backward(false); err != nil {
				return err
			}
			return y.Backward(false)
		}, MsgSecondBackward},
		{"h = w + w; h.div_(h); h.sum().backward(): the operand h is saved before the op writes it", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2)
			h := m(w.Add(w))
			if err := h.DivInPlace(h); err != nil {
				return err
			}
			return m(h.Sum()).Backward(false)
		}, "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.DoubleTensor [2]], which is output 0 of DivBackward0, is at version 1; expected version 0 instead." + msgModifiedHint},
		{"h = w * 2; with torch.no_grad(): v = h[0:1]\nh.mul_(2); v.exp()", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2)
			h := m(w.Mul(m(e.Scalar(2))))
			var v *Tensor
			if err := e.NoGrad(func() (err error) { v, err = h.Slice(0, 1); return err }); err != nil {
				return err
			}
			if err := h.MulInPlace(2); err != nil {
				return err
			}
			_, err := v.Exp()
			return err
		}, MsgNoGradViewRebased},
		{"x = torch.ones(2); with torch.no_grad(): v = x[0:1]\nv.add_(k), k requiring grad", func(t *testing.T, e *Engine) error {
			x := leaf(t, e, false, 1, 1)
			var v *Tensor
			if err := e.NoGrad(func() (err error) { v, err = x.Slice(0, 1); return err }); err != nil {
				return err
			}
			return v.AddInPlace(leaf(t, e, true, 1), 1)
		}, MsgNoGradViewInPlace},
		{"with torch.no_grad(): v = w[0:1]\ny = v.exp(); y.mul_(2); y.sum().backward(): exp saves its output, wanted or not", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2)
			var v *Tensor
			if err := e.NoGrad(func() (err error) { v, err = w.Slice(0, 1); return err }); err != nil {
				return err
			}
			y := m(v.Exp())
			if err := y.MulInPlace(2); err != nil {
				return err
			}
			return m(y.Sum()).Backward(false)
		}, "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.DoubleTensor [1]], which is output 0 of ExpBackward0, is at version 1; expected version 0 instead." + msgModifiedHint},
	}
	for _, c := range cases {
		t.Run(c.torch, func(t *testing.T) {
			if got := refusal(t, c.run(t, env(t))); got != c.want {
				t.Errorf("message:\n got %s\nwant %s", got, c.want)
			}
		})
	}
}

// TestPyTorchAllowed: what PyTorch runs, with the shapes, grad_fns and
// gradients PyTorch 1.13 gave.
func TestPyTorchAllowed(t *testing.T) {
	tensor := func(t *testing.T, e *Engine, shape []int, req bool, vals ...float64) *Tensor {
		return must[*Tensor](t)(e.Leaf(shape, vals, req))
	}
	wantShape := func(t *testing.T, x *Tensor, want ...int) {
		t.Helper()
		if !sameShape(x.Shape(), want) {
			t.Errorf("shape %v, want %v", x.Shape(), want)
		}
	}
	wantGrad := func(t *testing.T, name string, x *Tensor, want ...float64) {
		t.Helper()
		switch {
		case want == nil && x.Grad() != nil:
			t.Errorf("%s.grad %v, want None", name, values(t, x.Grad()))
		case want != nil && x.Grad() == nil:
			t.Errorf("%s.grad None, want %v", name, want)
		case want != nil && !near(values(t, x.Grad()), want):
			t.Errorf("%s.grad %v, want %v", name, values(t, x.Grad()), want)
		}
	}
	backward := func(t *testing.T, y *Tensor) {
		t.Helper()
		if err := must[*Tensor](t)(y.Sum()).Backward(false); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		torch string
		run   func(t *testing.T, e *Engine)
	}{
		{"torch.tensor(1.).shape == []; torch.tensor(1.) * torch.ones(1) has shape [1]", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			s := m(e.Scalar(1))
			wantShape(t, s)
			wantShape(t, m(s.Mul(leaf(t, e, false, 1))), 1)
		}},
		{"torch.tensor([[2.]]) * torch.tensor([1., 2, 3]) has shape [1, 3]; ones(1, 1) * tensor(1.) [1, 1]", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			a := tensor(t, e, []int{1, 1}, false, 2)
			wantShape(t, m(a.Mul(leaf(t, e, false, 1, 2, 3))), 1, 3)
			wantShape(t, m(a.Mul(m(e.Scalar(1)))), 1, 1)
		}},
		{"a = tensor([[1.], [2.]], requires_grad=True); b = tensor([10., 20, 30], requires_grad=True); (a*b).sum().backward(): a.grad [[60.], [60.]], b.grad [3., 3., 3.]", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			a := tensor(t, e, []int{2, 1}, true, 1, 2)
			b := leaf(t, e, true, 10, 20, 30)
			y := m(a.Mul(b))
			wantShape(t, y, 2, 3)
			backward(t, y)
			wantGrad(t, "a", a, 60, 60)
			wantGrad(t, "b", b, 3, 3, 3)
		}},
		{"x = torch.ones(3); x.add_(x); x.add_(x.detach()): the same elements may be read and written; x == [4., 4., 4.]", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			x := leaf(t, e, false, 1, 1, 1)
			if err := first(x.AddInPlace(x, 1), x.AddInPlace(m(x.Detach()), 1)); err != nil {
				t.Fatal(err)
			}
			if v := values(t, x); !near(v, []float64{4, 4, 4}) {
				t.Errorf("x %v, want [4 4 4]", v)
			}
		}},
		{"h = w * 2; h.retain_grad(); (h*h).sum().backward(): h.grad [4., 8.], w.grad [8., 16.]", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2)
			h := m(w.Mul(m(e.Scalar(2))))
			h.RetainGrad()
			backward(t, m(h.Mul(h)))
			wantGrad(t, "h", h, 4, 8)
			wantGrad(t, "w", w, 8, 16)
		}},
		{"h = w - w; h.retain_grad(); y = h.sum(); y.backward(); y.backward(): h.grad [2., 2.]", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 0.88, 1.33)
			h := m(w.Sub(w))
			h.RetainGrad()
			y := m(h.Sum())
			if err := first(y.Backward(false), y.Backward(false)); err != nil {
				t.Fatal(err)
			}
			wantGrad(t, "h", h, 2, 2)
		}},
		{"x = tensor([2., 4]); x.div_(k), k = tensor([2.], requires_grad=True); x.retain_grad(); x.relu().sum().backward(): x.grad [1., 1.], k.grad [-1.5]", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			x, k := leaf(t, e, false, 2, 4), leaf(t, e, true, 2)
			if err := x.DivInPlace(k); err != nil {
				t.Fatal(err)
			}
			x.RetainGrad()
			backward(t, m(x.Relu()))
			wantGrad(t, "x", x, 1, 1)
			wantGrad(t, "k", k, -1.5)
		}},
		{"h = w * 2; v = h[1:3]; v.mul_(3): h.grad_fn CopySlices, v.grad_fn AsStridedBackward0, h._version 1; h.sum().backward(): w.grad [2., 6., 6.]", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2, 3)
			h := m(w.Mul(m(e.Scalar(2))))
			v := m(h.Slice(1, 3))
			if err := v.MulInPlace(3); err != nil {
				t.Fatal(err)
			}
			if h.GradFn() != "torch::autograd::CopySlices" || v.GradFn() != "AsStridedBackward0" || h.Version() != 1 {
				t.Errorf("h.grad_fn %s, v.grad_fn %s, h._version %d", h.GradFn(), v.GradFn(), h.Version())
			}
			backward(t, h)
			wantGrad(t, "w", w, 2, 6, 6)
		}},
		{"h = w * 1; v = h[0:1]; v.mul_(2); v.sum().backward(): w.grad [2., 0., 0.] (v's grad_fn made anew from CopySlices)", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2, 3)
			v := m(m(w.Mul(m(e.Scalar(1)))).Slice(0, 1))
			if err := v.MulInPlace(2); err != nil {
				t.Fatal(err)
			}
			backward(t, v)
			wantGrad(t, "w", w, 2, 0, 0)
		}},
		{"h = w * 2; v = h[1:3]; v.mul_(k), k = tensor([5., 7], requires_grad=True); h.sum().backward(): w.grad [2., 10., 14.], k.grad [4., 6.]", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2, 3)
			k := leaf(t, e, true, 5, 7)
			h := m(w.Mul(m(e.Scalar(2))))
			if err := m(h.Slice(1, 3)).MulTensorInPlace(k); err != nil {
				t.Fatal(err)
			}
			backward(t, h)
			wantGrad(t, "w", w, 2, 10, 14)
			wantGrad(t, "k", k, 4, 6)
		}},
		{"t = torch.zeros(2); t.add_(w): t.grad_fn AddBackward0, requires grad, not a leaf; (t*t).sum().backward(): w.grad [2., 4.]", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2)
			x := leaf(t, e, false, 0, 0)
			if err := x.AddInPlace(w, 1); err != nil {
				t.Fatal(err)
			}
			if x.GradFn() != "AddBackward0" || !x.RequiresGrad() || x.IsLeaf() {
				t.Errorf("t.grad_fn %s, requires_grad %t, is_leaf %t", x.GradFn(), x.RequiresGrad(), x.IsLeaf())
			}
			backward(t, m(x.Mul(x)))
			wantGrad(t, "w", w, 2, 4)
		}},
		{"h = w * 1; h.sub_(k); h.sum().backward(): SubBackward0, w.grad [1., 1.], k.grad [-1., -1.]", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			w, k := leaf(t, e, true, 1, 2), leaf(t, e, true, 3, 4)
			h := m(w.Mul(m(e.Scalar(1))))
			if err := h.SubInPlace(k, 1); err != nil || h.GradFn() != "SubBackward0" {
				t.Fatalf("sub_: %v, grad_fn %s", err, h.GradFn())
			}
			backward(t, h)
			wantGrad(t, "w", w, 1, 1)
			wantGrad(t, "k", k, -1, -1)
		}},
		{"h = w * 1; h.div_(k): DivBackward0, w.grad [1/3, 1/4], k.grad [-1/9, -1/8]", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			w, k := leaf(t, e, true, 1, 2), leaf(t, e, true, 3, 4)
			h := m(w.Mul(m(e.Scalar(1))))
			if err := h.DivInPlace(k); err != nil || h.GradFn() != "DivBackward0" {
				t.Fatalf("div_: %v, grad_fn %s", err, h.GradFn())
			}
			backward(t, h)
			wantGrad(t, "w", w, 1.0/3, 0.25)
			wantGrad(t, "k", k, -1.0/9, -0.125)
		}},
		{"h = w * 1; h.mul_(k); h.sum().backward(): MulBackward0, w.grad [3., 4.], k.grad [1., 2.] (a clone of h before mul_ is saved)", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			w, k := leaf(t, e, true, 1, 2), leaf(t, e, true, 3, 4)
			h := m(w.Mul(m(e.Scalar(1))))
			if err := h.MulTensorInPlace(k); err != nil || h.GradFn() != "MulBackward0" {
				t.Fatalf("mul_: %v, grad_fn %s", err, h.GradFn())
			}
			backward(t, h)
			wantGrad(t, "w", w, 3, 4)
			wantGrad(t, "k", k, 1, 2)
		}},
		{"h = w + w; h.add_(2.5); y = h.sum(); y.backward(); y.backward(): AddBackward0 saves nothing, w.grad [4., 4.]", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2)
			h := m(w.Add(w))
			if err := h.AddScalarInPlace(2.5); err != nil || h.GradFn() != "AddBackward0" {
				t.Fatalf("add_: %v, grad_fn %s", err, h.GradFn())
			}
			y := m(h.Sum())
			if err := first(y.Backward(false), y.Backward(false)); err != nil {
				t.Fatal(err)
			}
			wantGrad(t, "w", w, 4, 4)
		}},
		{"with torch.no_grad(): v = w[0:2]\nv: requires grad, a leaf, no grad_fn; (v*2).sum().backward(): w.grad None, v.grad None; with torch.no_grad(): v.mul_(2)", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2, 3)
			var v *Tensor
			if err := e.NoGrad(func() (err error) { v, err = w.Slice(0, 2); return err }); err != nil {
				t.Fatal(err)
			}
			if !v.RequiresGrad() || !v.IsLeaf() || v.GradFn() != "" {
				t.Errorf("v: requires_grad %t, is_leaf %t, grad_fn %q", v.RequiresGrad(), v.IsLeaf(), v.GradFn())
			}
			backward(t, m(v.Mul(m(e.Scalar(2)))))
			wantGrad(t, "w", w)
			wantGrad(t, "v", v)
			if err := e.NoGrad(func() error { return v.MulInPlace(2) }); err != nil {
				t.Fatal(err)
			}
		}},
		{"with torch.no_grad(): v = w[0:1]\ny = (v*2).sum(); y.backward(); y.backward(): MulBackward0 saves no input whose gradient is not wanted", func(t *testing.T, e *Engine) {
			m := must[*Tensor](t)
			w := leaf(t, e, true, 1, 2)
			var v *Tensor
			if err := e.NoGrad(func() (err error) { v, err = w.Slice(0, 1); return err }); err != nil {
				t.Fatal(err)
			}
			y := m(m(v.Mul(m(e.Scalar(2)))).Sum())
			if err := first(y.Backward(false), y.Backward(false)); err != nil {
				t.Fatal(err)
			}
			wantGrad(t, "w", w)
		}},
	}
	for _, c := range cases {
		t.Run(c.torch, func(t *testing.T) { c.run(t, env(t)) })
	}
}

// TestPyTorchOrder: backward runs nodes in PyTorch's order (of the ready
// ones, the newest first) and DivBackward0 and MulBackward0 unpack their
// saved operands in the current release's order (the divisor, the other
// operand first), so that of several saved tensors modified the one PyTorch
// names is named; and gradients add in PyTorch's order, to the last bit.
func TestPyTorchOrder(t *testing.T) {
	cases := []struct {
		torch string
		run   func(t *testing.T, e *Engine) error
		want  string
	}{
		{"y = a.exp(); z = b.exp(); s = z.sum() + y.sum(); y.add_(1); z.add_(1); s.backward()", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			a, b := leaf(t, e, true, 1, 2), leaf(t, e, true, 1, 2, 3)
			y, z := m(a.Exp()), m(b.Exp())
			s := m(m(z.Sum()).Add(m(y.Sum())))
			if err := first(y.AddScalarInPlace(1), z.AddScalarInPlace(1)); err != nil {
				return err
			}
			return s.Backward(false)
		}, "[torch.DoubleTensor [3]], which is output 0 of ExpBackward0, is at version 1; expected version 0 instead."},
		{"x = a*1; d = k*1; y = x/d (k a zero-dim leaf); x.add_(1); d.add_(1); y.sum().backward()", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			a, k := leaf(t, e, true, 1, 2), m(e.Leaf([]int{}, []float64{2}, true))
			one := m(e.Scalar(1))
			x, d := m(a.Mul(one)), m(k.Mul(one))
			y := m(x.Div(d))
			if err := first(x.AddScalarInPlace(1), d.AddScalarInPlace(1)); err != nil {
				return err
			}
			return m(y.Sum()).Backward(false)
			// The current release's DivBackward0 unpacks the divisor
			// first and names it (PyTorch 2.11, on the H100 machine);
			// 1.13 unpacked the dividend first and named x, [2].
		}, "[torch.DoubleTensor []], which is output 0 of AddBackward0, is at version 1; expected version 0 instead."},
		{"the same, y = d/x", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			a, k := leaf(t, e, true, 1, 2), m(e.Leaf([]int{}, []float64{2}, true))
			one := m(e.Scalar(1))
			x, d := m(a.Mul(one)), m(k.Mul(one))
			y := m(d.Div(x))
			if err := first(x.AddScalarInPlace(1), d.AddScalarInPlace(1)); err != nil {
				return err
			}
			return m(y.Sum()).Backward(false)
		}, "[torch.DoubleTensor [2]], which is output 0 of AddBackward0, is at version 1; expected version 0 instead."}, // 1.13: [] (the dividend)
		{"a = p.neg(); b = q.neg(); y = a * b; a.add_(1); b.add_(1); b.add_(1); y.sum().backward()", func(t *testing.T, e *Engine) error {
			m := must[*Tensor](t)
			p, q := leaf(t, e, true, 1, 2), m(e.Leaf([]int{}, []float64{3}, true))
			a, b := m(p.Neg()), m(q.Neg())
			y := m(a.Mul(b))
			if err := first(a.AddScalarInPlace(1), b.AddScalarInPlace(1), b.AddScalarInPlace(1)); err != nil {
				return err
			}
			return m(y.Sum()).Backward(false)
			// The current release's MulBackward0 unpacks the other
			// operand first and names it (PyTorch 2.11: b, at version 2);
			// 1.13 unpacked self first and named a, [2] at version 1.
		}, "[torch.DoubleTensor []], which is output 0 of AddBackward0, is at version 2; expected version 0 instead."},
	}
	const prefix = "one of the variables needed for gradient computation has been modified by an inplace operation: "
	for _, c := range cases {
		t.Run(c.torch, func(t *testing.T) {
			if got, want := refusal(t, c.run(t, env(t))), prefix+c.want+msgModifiedHint; got != want {
				t.Errorf("message:\n got %s\nwant %s", got, want)
			}
		})
	}
	// a = tensor([0.14, 0.7], requires_grad=True); y = a*3; z = y*a
	// s = (y+z).sum(); s.backward(retain_graph=True); s.backward()
	// a.grad.tolist() == [7.680000000000001, 14.399999999999999]: .grad + (g1 + g2), not (.grad + g1) + g2
	m := must[*Tensor](t)
	e := env(t)
	a := leaf(t, e, true, 0.14, 0.7)
	y := m(a.Mul(m(e.Scalar(3))))
	s := m(m(y.Add(m(y.Mul(a)))).Sum())
	if err := first(s.Backward(true), s.Backward(false)); err != nil {
		t.Fatal(err)
	}
	if g := values(t, a.Grad()); g[0] != 7.680000000000001 || g[1] != 14.399999999999999 {
		t.Errorf("a.grad %v, want PyTorch's [7.680000000000001 14.399999999999999] exactly", g)
	}
}

// TestPyTorchDivGradRounding: the divisor's gradient is PyTorch's
// -g*((x/y)/y), not -g*x/(y*y), which rounds otherwise:
//
//	y = torch.tensor([1.2], requires_grad=True)
//	(torch.tensor([1.3]) / y).sum().backward()
//	y.grad.item() == -0.9027777777777779   # -1.3/(1.2*1.2) is -0.9027777777777778
func TestPyTorchDivGradRounding(t *testing.T) {
	m := must[*Tensor](t)
	e := env(t)
	y := leaf(t, e, true, 1.2)
	if err := m(m(leaf(t, e, false, 1.3).Div(y)).Sum()).Backward(false); err != nil {
		t.Fatal(err)
	}
	if g := values(t, y.Grad()); g[0] != -0.9027777777777779 {
		t.Errorf("y.grad %v, want PyTorch's -0.9027777777777779 exactly", g[0])
	}
}

// TestPyTorchSumRounding: Sum adds in the order of PyTorch's CPU kernel,
// which for more than four elements is not the sequential one (in
// brackets, what a sequential sum gives): PyTorch 1.13's sums, to the
// last bit, through Sum and the gradient of a product with it.
//
//	torch.tensor([1.0, 1.8, 0.2, 1.1, 1.2]).sum().item() == 5.300000000000001   [5.3]
func TestPyTorchSumRounding(t *testing.T) {
	cases := []struct {
		x    []float64
		want float64
	}{
		{[]float64{1.0, 1.8, 0.2, 1.1, 1.2}, 5.300000000000001},                                                                    // 5.3
		{[]float64{0.1, 0.8, 1.4, 0.9, 1.5, 0.3, 0.5}, 5.5},                                                                        // 5.499999999999999
		{[]float64{1.3, 1.5, 0.8, 0.2, 0.5, 0.4, 0.6, 1.6, 0.4}, 7.3},                                                              // 7.300000000000001
		{[]float64{1.8, 1.8, 0.1, 0.8, 1.0, 0.0, 0.8, 1.8, 0.2, 1.2, 0.2, 1.2, 1.8, 0.4, 0.0, 0.2, 1.1, 0.0, 0.2, 1.0, 1.8}, 17.4}, // 17.399999999999995
		{[]float64{1.4, 0.1, 0.9, 1.4, 1.5, 0.8, 1.8, 0.3, 1.4, 1.5, 1.8, 1.0, 0.2, 0.1, 1.1, 0.3, 1.3, 0.2, 1.6, 0.4,
			0.0, 0.4, 0.9, 1.1, 0.8, 0.3, 1.0, 1.9, 1.1, 1.9, 0.1, 2.0, 1.8, 1.1, 1.0, 1.1, 1.8, 0.1, 1.3, 1.1}, 39.900000000000006}, // 39.9
	}
	for _, c := range cases {
		m := must[*Tensor](t)
		e := env(t)
		x := leaf(t, e, false, c.x...)
		s := m(x.Sum())
		if got := values(t, s)[0]; got != c.want {
			t.Errorf("%v.sum() = %v, want PyTorch's %v", c.x, got, c.want)
		}
		// w * x.sum(): w.grad is the sum as computed.
		w := leaf(t, e, true, 1)
		if err := m(m(w.Mul(s)).Sum()).Backward(false); err != nil {
			t.Fatal(err)
		}
		if g := values(t, w.Grad())[0]; g != c.want {
			t.Errorf("w.grad %v, want %v", g, c.want)
		}
	}
}
