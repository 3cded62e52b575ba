package autograd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/internal/shape"
)

// Broadcasting follows PyTorch's rules whole (package internal/shape,
// which the autograd language's generator follows too): shapes are
// aligned on their last dimension, a missing dimension counts as 1, and
// two sizes must be equal or one of them 1; the result takes the larger.
// An operand's element for each element of the result is found through
// broadcastIndex, and its gradient is the sum of the result's gradient
// over the elements it was broadcast to.

// broadcastShape returns the shape a and b broadcast to, or PyTorch's
// refusal (infer_size_impl).
func broadcastShape(op string, id int, a, b []int) ([]int, error) {
	out, m := shape.Broadcast(a, b)
	if m != nil {
		return nil, &Error{Op: op, Tensor: id, Msg: fmt.Sprintf(
			"The size of tensor a (%d) must match the size of tensor b (%d) at non-singleton dimension %d", m.A, m.B, m.Dim)}
	}
	return out, nil
}

// broadcastIndex maps each element of a result of shape out, row-major,
// to the element of an operand of shape in (which broadcasts to out)
// that it reads.
func broadcastIndex(out, in []int) []int {
	idx := make([]int, numel(out))
	// stride of each of out's dimensions in the operand: 0 where the
	// operand's size is 1 (or missing), so that it is read again.
	strides := make([]int, len(out))
	s := 1
	for k := range out {
		d := shape.FromEnd(in, k)
		if d != 1 {
			strides[len(out)-1-k] = s
		}
		s *= d
	}
	for i := range idx {
		rem, j := i, 0
		for k := len(out) - 1; k >= 0; k-- {
			j += rem % out[k] * strides[k]
			rem /= out[k]
		}
		idx[i] = j
	}
	return idx
}

// shapeString writes a shape as PyTorch's messages do: [1, 3], [].
func shapeString(shape []int) string {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	return "[" + strings.Join(dims, ", ") + "]"
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// dimsX writes a matrix's shape as PyTorch's mm does: 2x3.
func dimsX(shape []int) string {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.Itoa(d)
	}
	return strings.Join(dims, "x")
}
