package drive

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// DefaultTolerance is the relative difference two drivers' numbers may
// have and still be equal: 1e-9, so that the rounding of a sum added in
// another order passes and a wrong gradient does not.
const DefaultTolerance = 1e-9

// DefaultAbsolute is the difference below which two drivers' numbers are
// equal whatever their size: 1e-12. Two libms round exp, log and tanh
// differently in the last bit (PyTorch's CPU kernels use SLEEF's, Go its
// own), and a cancellation after them (exp(log(3)) - 3, or tanh's
// gradient 1 - y*y where y is near 1) turns a last-bit difference into a
// relative one of any size, or a zero against 4e-16.
const DefaultAbsolute = 1e-12

// tolerance says when two numbers are equal: within a relative or an
// absolute difference.
type tolerance struct{ rel, abs float64 }

// Difference is one field two answers to the same call disagree on.
type Difference struct {
	Field string // "outcome", "message", "tensor", "tensor.shape", "tensor.values[2]", "grads", "grads[handle 1].values[0]", ...
	A, B  string // each answer's value, as the protocol writes it
}

// compareAnswers returns the first field on which a and b, two drivers'
// answers to the same call, disagree, in the order: outcome, message (a
// handle neither holds a tensor under is refused in each driver's own
// words),
// tensor (its presence, shape, requires_grad, is_leaf, grad_fn, version,
// values), grads (the handles, then each one's values). Numbers are equal
// within tol (see closeTo). Events are not compared: two runtimes record differently, and
// the model judges each (see Diff).
func compareAnswers(a, b *Outcome, tol tolerance) *Difference {
	outcome := func(x *Outcome) string {
		if x.Refused {
			return "refused"
		}
		return "done"
	}
	if a.Refused != b.Refused {
		return &Difference{"outcome", outcome(a) + messageNote(a), outcome(b) + messageNote(b)}
	}
	if a.Message != b.Message && !(noTensor(a.Message) && noTensor(b.Message)) {
		return &Difference{"message", strconv.Quote(a.Message), strconv.Quote(b.Message)}
	}
	if d := compareTensors(a.Tensor, b.Tensor, tol); d != nil {
		return d
	}
	return compareGrads(a.Grads, b.Grads, tol)
}

// noTensor reports whether msg is a driver's refusal of a call that names
// a handle it holds no tensor under (the call that would have made it
// was refused, or the tensor was dropped): a driver's words, not its
// runtime's, which each driver prefixes with its name.
func noTensor(msg string) bool { return strings.Contains(msg, "driver: no tensor under handle ") }

// messageNote is a refusal's message, for an outcome that differs.
func messageNote(a *Outcome) string {
	if !a.Refused {
		return ""
	}
	return " " + strconv.Quote(a.Message)
}

func compareTensors(a, b *TensorState, tol tolerance) *Difference {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil || b == nil:
		return &Difference{"tensor", tensorText(a), tensorText(b)}
	case !slices.Equal(a.Shape, b.Shape):
		return &Difference{"tensor.shape", string(appendInts(nil, a.Shape)), string(appendInts(nil, b.Shape))}
	case a.RequiresGrad != b.RequiresGrad:
		return &Difference{"tensor.requires_grad", strconv.FormatBool(a.RequiresGrad), strconv.FormatBool(b.RequiresGrad)}
	case a.IsLeaf != b.IsLeaf:
		return &Difference{"tensor.is_leaf", strconv.FormatBool(a.IsLeaf), strconv.FormatBool(b.IsLeaf)}
	case a.GradFn != b.GradFn:
		return &Difference{"tensor.grad_fn", gradFnText(a.GradFn), gradFnText(b.GradFn)}
	case a.Version != b.Version:
		return &Difference{"tensor.version", strconv.Itoa(a.Version), strconv.Itoa(b.Version)}
	}
	return compareFloats("tensor.values", a.Values, b.Values, tol)
}

func compareGrads(a, b []Grad, tol tolerance) *Difference {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return &Difference{"grads", gradsText(a), gradsText(b)}
	}
	for i := range a {
		if a[i].Handle != b[i].Handle {
			return &Difference{"grads", gradsText(a), gradsText(b)}
		}
	}
	for i := range a {
		if d := compareFloats(fmt.Sprintf("grads[handle %d].values", a[i].Handle), a[i].Values, b[i].Values, tol); d != nil {
			return d
		}
	}
	return nil
}

// compareFloats compares two arrays of numbers: their lengths, then each
// pair, naming the first that differs.
func compareFloats(field string, a, b []float64, tol tolerance) *Difference {
	if len(a) != len(b) {
		return &Difference{field, string(appendFloats(nil, a)), string(appendFloats(nil, b))}
	}
	for i := range a {
		if !closeTo(a[i], b[i], tol) {
			return &Difference{fmt.Sprintf("%s[%d]", field, i), string(appendFloat(nil, a[i])), string(appendFloat(nil, b[i]))}
		}
	}
	return nil
}

// closeTo reports whether x and y are equal within tol: |x-y| <=
// tol.rel*max(|x|,|y|), or |x-y| <= tol.abs; NaN equals NaN, and an
// infinity equals only itself.
func closeTo(x, y float64, tol tolerance) bool {
	switch {
	case x == y:
		return true
	case math.IsNaN(x) || math.IsNaN(y):
		return math.IsNaN(x) && math.IsNaN(y)
	case math.IsInf(x, 0) || math.IsInf(y, 0):
		return false
	}
	d := math.Abs(x - y)
	return d <= tol.rel*max(math.Abs(x), math.Abs(y)) || d <= tol.abs
}

func tensorText(t *TensorState) string {
	if t == nil {
		return "none"
	}
	return string(appendTensor(nil, t))
}

func gradFnText(fn string) string {
	if fn == "" {
		return "null"
	}
	return fn
}

func gradsText(gs []Grad) string {
	if gs == nil {
		return "none"
	}
	b := []byte{'['}
	for i, g := range gs {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"handle":%d,"values":`, g.Handle)
		b = append(appendFloats(b, g.Values), '}')
	}
	return string(append(b, ']'))
}
