package autograd

import "testing"

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
