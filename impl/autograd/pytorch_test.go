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
