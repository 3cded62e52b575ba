package autograd

import (
	"fmt"
	"strconv"
	"strings"
)

// PyTorch's wording, kept verbatim so that a user who knows PyTorch's
// errors recognises these (torch/csrc/autograd/saved_variable.cpp and
// VariableTypeUtils.h's check_inplace).
const (
	// MsgSecondBackward is raised when a node whose saved tensors were
	// released is run again (saved_variable.cpp, ERR_BACKWARD_TWICE).
	MsgSecondBackward = "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward."
	// MsgLeafInPlace is check_inplace's message for a leaf that requires grad.
	MsgLeafInPlace = "a leaf Variable that requires grad is being used in an in-place operation."
	// MsgLeafViewInPlace is its message for a view of such a leaf.
	MsgLeafViewInPlace = "a view of a leaf Variable that requires grad is being used in an in-place operation."
	// MsgNoGradViewInPlace is handle_view_on_rebase's message for an
	// in-place op, recorded, on a view made under no_grad.
	MsgNoGradViewInPlace = "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked)."
	// MsgNoGradViewRebased is its message for a use, with grad mode on,
	// of such a view after its base or another view of it was written
	// in place (with grad mode on or not).
	MsgNoGradViewRebased = "A view was created in no_grad mode and its base or another view of its base has been modified inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked)."
	// MsgOverlap is assert_no_partial_overlap's message for an in-place
	// op whose operand shares some of the written elements.
	MsgOverlap = "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation."
	// MsgNoGrad is run_backward's message for a root outside any graph.
	MsgNoGrad = "element 0 of tensors does not require grad and does not have a grad_fn"
	// MsgNotScalar is _make_grads' message for a root with more than one element.
	MsgNotScalar = "grad can be implicitly created only for scalar outputs"
	// MsgSliceZeroDim is slice's message for a zero-dimensional tensor.
	MsgSliceZeroDim = "slice() cannot be applied to a 0-dim tensor."
	// MsgRetainGradNoGrad is retain_grad's message for a tensor that
	// does not require grad (VariableHooks::retain_grad).
	MsgRetainGradNoGrad = "can't retain_grad on Tensor that has requires_grad=False"
	// msgModifiedHint closes the saved-modified message when anomaly
	// detection is off, as it always is here: the current release's words
	// (PyTorch 2.11; 1.13 said set_detect_anomaly(True), and the PyTorch
	// driver answers the current words, saying so in its notes).
	msgModifiedHint = " Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."
)

// Error is a call the engine refused. Op names the call ("mul",
// "add_", "backward"), Tensor the tensor it refused (its number, from 1
// in the order made; 0 for none), and Msg says why, in PyTorch's words
// where PyTorch refuses the same call.
type Error struct {
	Op     string
	Tensor int
	Msg    string
}

// Error reads "autograd: add_ on tensor 3: a leaf Variable ...".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("autograd: ")
	b.WriteString(e.Op)
	if e.Tensor != 0 {
		b.WriteString(" on tensor ")
		b.WriteString(strconv.Itoa(e.Tensor))
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// modifiedMsg is saved_variable.cpp's message for a saved tensor unpacked
// at another version than it was saved at. The clause "which is output N
// of X," appears when the saved tensor has a grad_fn at unpack time: the
// saving node itself for a saved output (PyTorch passes saved_for), the
// tensor's own grad_fn for a saved non-leaf input; a leaf has none.
func modifiedMsg(shape []int, gradFn string, outputNr, version, saved int) string {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	s := "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.DoubleTensor [" +
		strings.Join(dims, ", ") + "]]"
	if gradFn != "" {
		s += fmt.Sprintf(", which is output %d of %s,", outputNr, gradFn)
	}
	return s + fmt.Sprintf(" is at version %d; expected version %d instead.", version, saved) + msgModifiedHint
}
