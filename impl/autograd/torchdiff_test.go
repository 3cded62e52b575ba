package autograd

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
)

// The tests of this file are differences between the engine and PyTorch
// that the differential check (drive's Differ, the Go driver beside the
// PyTorch one on generated programs) found, each fixed, stated as the
// program in PyTorch's terms and what PyTorch 1.13 did, recorded once;
// they run without PyTorch.

// TestPyTorchRetainGradNoGrad: retain_grad on a tensor that does not
// require grad is refused; on one that does, it is accepted.
//
//	x = torch.tensor([1., 2.])
//	x.retain_grad()   # RuntimeError: can't retain_grad on Tensor that has requires_grad=False
//	w = torch.tensor([1., 2.], requires_grad=True)
//	w.retain_grad(); (w * 2).retain_grad()   # fine
func TestPyTorchRetainGradNoGrad(t *testing.T) {
	m := must[*Tensor](t)
	e := env(t)
	x := leaf(t, e, false, 1, 2)
	if got := refusal(t, x.RetainGrad()); got != MsgRetainGradNoGrad {
		t.Errorf("x.retain_grad(): %q, want %q", got, MsgRetainGradNoGrad)
	}
	w := leaf(t, e, true, 1, 2)
	if err := first(w.RetainGrad(), m(w.Mul(m(e.Scalar(2)))).RetainGrad()); err != nil {
		t.Errorf("retain_grad on tensors that require grad: %v", err)
	}
}

// TestPyTorchStaleViewIsLeaf: check_inplace's is_leaf reads a view's
// grad_fn as it is, without making it anew: a view made while its base
// required no grad is refused as a leaf after an in-place op brought the
// base into a graph, until its grad_fn is asked for.
//
//	x = torch.tensor([-1., -0.84]); v = x[1:2]
//	w = torch.tensor([-1.12, 2.49], requires_grad=True)
//	x.add_(w)
//	v.add_(torch.tensor([1.]))  # RuntimeError: a leaf Variable that requires grad is being used in an in-place operation.
//	v.add_(torch.tensor([1.]))  # the same
//	v.grad_fn                   # <AsStridedBackward0>
//	v.add_(torch.tensor([1.]))  # fine: x.grad_fn CopySlices, v._version 2
//	x.sum().backward()          # w.grad [1., 1.]
func TestPyTorchStaleViewIsLeaf(t *testing.T) {
	m := must[*Tensor](t)
	e := env(t)
	x := leaf(t, e, false, -1, -0.84)
	v := m(x.Slice(1, 2))
	w := leaf(t, e, true, -1.12, 2.49)
	if err := x.AddInPlace(w, 1); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got := refusal(t, v.AddInPlace(leaf(t, e, false, 1), 1)); got != MsgLeafInPlace {
			t.Errorf("v.add_ before v.grad_fn: %q, want %q", got, MsgLeafInPlace)
		}
	}
	if got := v.GradFn(); got != "AsStridedBackward0" {
		t.Errorf("v.grad_fn %s, want AsStridedBackward0", got)
	}
	if err := v.AddInPlace(leaf(t, e, false, 1), 1); err != nil {
		t.Fatalf("v.add_ after v.grad_fn: %v", err)
	}
	if got, ver := x.GradFn(), v.Version(); got != "torch::autograd::CopySlices" || ver != 2 {
		t.Errorf("x.grad_fn %s, v._version %d, want CopySlices, 2", got, ver)
	}
	if err := m(x.Sum()).Backward(false); err != nil {
		t.Fatal(err)
	}
	if g := values(t, w.Grad()); !near(g, []float64{1, 1}) {
		t.Errorf("w.grad %v, want [1 1]", g)
	}
}

// TestPyTorchScalarInPlace: sub_ and div_ by a number. sub_'s
// SubBackward0 saves nothing, so a second backward runs again; div_'s
// DivBackward0 saves the wrapped number, as mul_'s MulBackward0 does, so
// a second one is refused.
//
//	w = torch.tensor([1., 2.], requires_grad=True)
//	h = w.neg(); h.sub_(2.5)    # h.grad_fn SubBackward0, h [-3.5, -4.5]
//	y = h.sum(); y.backward(); y.backward()   # w.grad [-2., -2.]
//	w = torch.tensor([1., 2.], requires_grad=True)
//	h = w.neg(); h.div_(2.5)    # h.grad_fn DivBackward0, h [-0.4, -0.8]
//	y = h.sum(); y.backward()   # w.grad [-0.4, -0.4]
//	y.backward()                # RuntimeError: Trying to backward through the graph a second time ...
func TestPyTorchScalarInPlace(t *testing.T) {
	cases := []struct {
		op            string
		do            func(h *Tensor) error
		fn            string
		h, grad       []float64
		secondRefused bool
	}{
		{"sub_", func(h *Tensor) error { return h.SubScalarInPlace(2.5) }, "SubBackward0", []float64{-3.5, -4.5}, []float64{-2, -2}, false},
		{"div_", func(h *Tensor) error { return h.DivScalarInPlace(2.5) }, "DivBackward0", []float64{-0.4, -0.8}, []float64{-0.4, -0.4}, true},
	}
	for _, tc := range cases {
		t.Run(tc.op, func(t *testing.T) {
			m := must[*Tensor](t)
			e := env(t)
			w := leaf(t, e, true, 1, 2)
			h := m(w.Neg())
			if err := tc.do(h); err != nil {
				t.Fatal(err)
			}
			if got := h.GradFn(); got != tc.fn {
				t.Errorf("h.grad_fn %s, want %s", got, tc.fn)
			}
			if v := values(t, h); !near(v, tc.h) {
				t.Errorf("h %v, want %v", v, tc.h)
			}
			y := m(h.Sum())
			if err := y.Backward(false); err != nil {
				t.Fatal(err)
			}
			err := y.Backward(false)
			if tc.secondRefused {
				if got := refusal(t, err); got != MsgSecondBackward {
					t.Errorf("second backward: %q, want MsgSecondBackward", got)
				}
			} else if err != nil {
				t.Errorf("second backward: %v, want it to run again", err)
			}
			if g := values(t, w.Grad()); !near(g, tc.grad) {
				t.Errorf("w.grad %v, want %v", g, tc.grad)
			}
		})
	}
}

// TestPyTorchBackwardNoGradView: a view made under no_grad of a tensor
// that requires grad requires grad itself, but backward from it is
// refused: it is a leaf with no grad accumulator of its own.
//
//	w = torch.tensor([-2.18, 0.55], requires_grad=True)
//	v = w[1:2]
//	with torch.no_grad(): r = v.reshape(1, 1)
//	r.requires_grad, r.is_leaf   # True, True
//	r.backward()                 # RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn
func TestPyTorchBackwardNoGradView(t *testing.T) {
	m := must[*Tensor](t)
	e := env(t)
	w := leaf(t, e, true, -2.18, 0.55)
	v := m(w.Slice(1, 2))
	var r *Tensor
	if err := e.NoGrad(func() (err error) { r, err = v.Reshape(1, 1); return err }); err != nil {
		t.Fatal(err)
	}
	if !r.RequiresGrad() || !r.IsLeaf() {
		t.Errorf("r.requires_grad %t, r.is_leaf %t, want both", r.RequiresGrad(), r.IsLeaf())
	}
	if got := refusal(t, r.Backward(false)); got != MsgNoGrad {
		t.Errorf("r.backward(): %q, want %q", got, MsgNoGrad)
	}
	if r.Grad() != nil || w.Grad() != nil {
		t.Error("a refused backward left a grad")
	}
}

// TestPyTorchSliceZeroDim: slicing a zero-dimensional tensor is refused
// in PyTorch's words.
//
//	torch.tensor(1.)[0:1]   # IndexError: slice() cannot be applied to a 0-dim tensor.
func TestPyTorchSliceZeroDim(t *testing.T) {
	e := env(t)
	x := must[*Tensor](t)(e.Scalar(1))
	_, err := x.Slice(0, 1)
	if got := refusal(t, err); got != MsgSliceZeroDim {
		t.Errorf("x[0:1]: %q, want %q", got, MsgSliceZeroDim)
	}
}

// TestPyTorchPowAndRelu: pow by a number is computed as PyTorch's CPU
// kernel computes it (0.5 is sqrt: (-inf)**0.5 is NaN), and relu's
// gradient is a selection (an infinite gradient where relu's output is 0
// gives 0, not NaN).
//
//	x = torch.tensor([0.], requires_grad=True)
//	y = x.relu().pow(-1)      # tensor([inf])
//	y.sum().backward()        # x.grad tensor([0.])
//	z = torch.tensor([-inf, -4., 0.])
//	z.pow(0.5), z.pow(-0.5)   # [nan, nan, 0.], [nan, nan, inf]
//	z.pow(-1), z.pow(1.5)     # [-0., -0.25, inf], [inf, nan, 0.]
//	w = torch.tensor([-2., 0.], requires_grad=True)
//	w.pow(0.5).sum().backward()   # w.grad [nan, inf]
func TestPyTorchPowAndRelu(t *testing.T) {
	m := must[*Tensor](t)
	e := env(t)
	x := leaf(t, e, true, 0)
	y := m(m(x.Relu()).Pow(-1))
	if v := values(t, y); !math.IsInf(v[0], 1) {
		t.Errorf("y %v, want [+Inf]", v)
	}
	if err := m(y.Sum()).Backward(false); err != nil {
		t.Fatal(err)
	}
	if g := values(t, x.Grad()); g[0] != 0 {
		t.Errorf("x.grad %v, want [0]", g)
	}
	inf, nan := math.Inf(1), math.NaN()
	z := leaf(t, e, false, -inf, -4, 0)
	for _, tc := range []struct {
		c    float64
		want []float64
	}{
		{0.5, []float64{nan, nan, 0}},
		{-0.5, []float64{nan, nan, inf}},
		{-1, []float64{math.Copysign(0, -1), -0.25, inf}},
		{1.5, []float64{inf, nan, 0}},
	} {
		if got := values(t, m(z.Pow(tc.c))); !sameFloats(got, tc.want) {
			t.Errorf("z.pow(%g) %v, want %v", tc.c, got, tc.want)
		}
	}
	w := leaf(t, e, true, -2, 0)
	if err := m(m(w.Pow(0.5)).Sum()).Backward(false); err != nil {
		t.Fatal(err)
	}
	if g := values(t, w.Grad()); !sameFloats(g, []float64{nan, inf}) {
		t.Errorf("w.grad %v, want [NaN +Inf]", g)
	}
}

// sameFloats reports whether a and b hold the same numbers, bit for bit
// but NaN equal to any NaN.
func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) || a[i] == 0 && math.Signbit(a[i]) != math.Signbit(b[i]) {
			return false
		}
	}
	return true
}

// TestPyTorchCopySlicesTwice: CopySlices, the grad_fn an in-place op on a
// view gives its base, lets go of its op once a backward without
// retain_graph ran it, and refuses to run again even where that op saved
// nothing (add_).
//
//	x1 = torch.tensor([1., 1.], requires_grad=True)
//	x2 = torch.tensor([[1.]]); v3 = x2[0:1]
//	v3.add_(x1.sum())      # x2.grad_fn CopySlices, v3.grad_fn AsStridedBackward0
//	v3.backward()          # x1.grad [1., 1.]
//	v3.backward()          # RuntimeError: Trying to backward through the graph a second time ...
func TestPyTorchCopySlicesTwice(t *testing.T) {
	m := must[*Tensor](t)
	e := env(t)
	x1 := leaf(t, e, true, 1, 1)
	x2 := m(e.Leaf([]int{1, 1}, []float64{1}, false))
	v3 := m(x2.Slice(0, 1))
	if err := v3.AddInPlace(m(x1.Sum()), 1); err != nil {
		t.Fatal(err)
	}
	if err := v3.Backward(false); err != nil {
		t.Fatal(err)
	}
	if got := refusal(t, v3.Backward(false)); got != MsgSecondBackward {
		t.Errorf("second backward: %q, want MsgSecondBackward", got)
	}
	if g := values(t, x1.Grad()); !near(g, []float64{1, 1}) {
		t.Errorf("x1.grad %v, want [1 1]", g)
	}
}

// TestPyTorchReluNegativeZero: relu keeps -0 (and NaN), as PyTorch's
// clamp_min does.
//
//	torch.tensor([-0., -1., float("nan")]).relu()   # tensor([-0., 0., nan])
//	1 / torch.tensor([-0.]).relu()                  # tensor([-inf])
func TestPyTorchReluNegativeZero(t *testing.T) {
	m := must[*Tensor](t)
	e := env(t)
	negZero := math.Copysign(0, -1)
	got := values(t, m(leaf(t, e, false, negZero, -1, math.NaN()).Relu()))
	if !sameFloats(got, []float64{negZero, 0, math.NaN()}) {
		t.Errorf("relu %v, want [-0 0 NaN]", got)
	}
}

// TestPyTorchDroppedSavedViewNamed: a saved view the program let go of
// is named, when found modified, by the grad_fn PyTorch makes it anew
// (its saved variable keeps it).
//
//	x1 = torch.ones(3, 1, requires_grad=True)
//	r2 = x1.reshape(3); h3 = r2 * x1; del r2
//	with torch.no_grad(): x1.mul_(2)
//	h3.sum().backward()   # RuntimeError (1.13): ... [torch.DoubleTensor [3]], which is output 0 of AsStridedBackward0, is at version 1; expected version 0 instead. ...
//
// The current release's MulBackward0 unpacks the other operand first
// (ops.go, Mul): of r2 * x1 it names x1, the leaf, modified too. So the
// program is h3 = x1 * r2 here, whose r2 the current release names (1.13,
// self first, names x1 there).
func TestPyTorchDroppedSavedViewNamed(t *testing.T) {
	m := must[*Tensor](t)
	rt := impl.New(impl.Config{})
	e, err := New(rt, Config{Lifetime: LifetimePyTorch})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ScopeEnter(); err != nil {
		t.Fatal(err)
	}
	x1 := m(e.Leaf([]int{3, 1}, []float64{1, 1, 1}, true))
	r2 := m(x1.Reshape(3))
	h3 := m(x1.Mul(r2))
	if err := r2.Drop(); err != nil {
		t.Fatal(err)
	}
	if err := e.NoGrad(func() error { return x1.MulInPlace(2) }); err != nil {
		t.Fatal(err)
	}
	got := refusal(t, m(h3.Sum()).Backward(false))
	want := "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.DoubleTensor [3]], which is output 0 of AsStridedBackward0, is at version 1; expected version 0 instead." + msgModifiedHint
	if got != want {
		t.Errorf("message:\n got %s\nwant %s", got, want)
	}
}
