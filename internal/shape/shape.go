// Package shape holds the shape rules of PyTorch's tensors that the
// autograd engine (impl/autograd), the autograd language's generator
// (properties/autograd) and the differential tests all follow: written
// once, so that what the generator expects of a shape is what the engine
// does with it.
package shape

// Numel is the number of elements of a tensor of shape s (1 for the
// zero-dimensional shape []).
func Numel(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// Mismatch is why two shapes do not broadcast: at dimension Dim of the
// result (counted from the first), a has size A and b size B, neither 1.
type Mismatch struct {
	A, B, Dim int
}

// Broadcast returns the shape a and b broadcast to under PyTorch's rules:
// shapes are aligned on their last dimension, a missing dimension counts
// as 1, and two sizes must be equal or one of them 1; the result takes
// the larger. Where they do not broadcast, it returns the mismatch nearest
// the last dimension, as PyTorch's infer_size_impl reports it.
func Broadcast(a, b []int) ([]int, *Mismatch) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := n - 1; i >= 0; i-- {
		da, db := FromEnd(a, n-1-i), FromEnd(b, n-1-i)
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, &Mismatch{A: da, B: db, Dim: i}
		}
	}
	return out, nil
}

// FromEnd is s's k-th dimension from the last (0: the last), 1 where s
// has fewer.
func FromEnd(s []int, k int) int {
	if k >= len(s) {
		return 1
	}
	return s[len(s)-1-k]
}

// Matmul returns the shape of a @ b (PyTorch's matmul) for operands of
// rank 1 and 2, and whether they fit.
func Matmul(a, b []int) ([]int, bool) {
	switch {
	case len(a) == 1 && len(b) == 1 && a[0] == b[0]:
		return []int{}, true
	case len(a) == 2 && len(b) == 1 && a[1] == b[0]:
		return []int{a[0]}, true
	case len(a) == 1 && len(b) == 2 && a[0] == b[0]:
		return []int{b[1]}, true
	case len(a) == 2 && len(b) == 2 && a[1] == b[0]:
		return []int{a[0], b[1]}, true
	}
	return nil, false
}
