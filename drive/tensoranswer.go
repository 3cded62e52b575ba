package drive

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Numbers of layer 5: JSON numbers, and the strings "nan", "inf" and
// "-inf" for what JSON has no number for.

// appendFloat appends f as the protocol writes a number: a JSON number
// that reads back as the same float64, or for a value JSON has no number
// for, the string "nan", "inf" or "-inf".
func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"nan"`...)
	case math.IsInf(f, 1):
		return append(b, `"inf"`...)
	case math.IsInf(f, -1):
		return append(b, `"-inf"`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// appendFloats appends fs as a JSON array of appendFloat's numbers.
func appendFloats(b []byte, fs []float64) []byte {
	b = append(b, '[')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat(b, f)
	}
	return append(b, ']')
}

// float reads a number, or one of the strings "nan", "inf", "-inf".
func (s *scanner) float() (float64, error) {
	if s.peek() == '"' {
		str, err := s.str()
		if err != nil {
			return 0, err
		}
		switch str {
		case "nan":
			return math.NaN(), nil
		case "inf":
			return math.Inf(1), nil
		case "-inf":
			return math.Inf(-1), nil
		}
		return 0, fmt.Errorf(`want a number or "nan", "inf", "-inf", got %q`, str)
	}
	lit := s.number()
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return 0, fmt.Errorf("want a number, got %q", lit)
	}
	return f, nil
}

func (s *scanner) floats(out []float64) ([]float64, error) {
	out = out[:0]
	err := s.array(func() error {
		f, err := s.float()
		out = append(out, f)
		return err
	})
	return out, err
}

func (s *scanner) ints(out []int) ([]int, error) {
	out = out[:0]
	err := s.array(func() error {
		n, err := s.int()
		out = append(out, n)
		return err
	})
	return out, err
}

// boolean reads true or false.
func (s *scanner) boolean() (bool, error) {
	s.ws()
	switch {
	case len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "true":
		s.i += 4
		return true, nil
	case len(s.b)-s.i >= 5 && string(s.b[s.i:s.i+5]) == "false":
		s.i += 5
		return false, nil
	}
	return false, s.want("true or false")
}

// TensorState is what an answer says of a tensor (its "tensor" field):
// the result of a call that makes one, or the target of an in-place op
// after it.
type TensorState struct {
	Shape        []int     // [] for a zero-dimensional tensor
	Values       []float64 // row-major
	RequiresGrad bool
	IsLeaf       bool
	GradFn       string // the node's name, PyTorch's ("MulBackward0"); "" for none
	Version      int    // the version counter (PyTorch's _version)
}

// Grad is one handle's gradient, as an answer to backward lists it.
type Grad struct {
	Handle int
	Values []float64
}

// appendTensor appends the answer's "tensor" object.
func appendTensor(b []byte, t *TensorState) []byte {
	b = append(b, `{"shape":`...)
	b = appendInts(b, t.Shape)
	b = append(b, `,"values":`...)
	b = appendFloats(b, t.Values)
	b = append(b, `,"requires_grad":`...)
	b = strconv.AppendBool(b, t.RequiresGrad)
	b = append(b, `,"is_leaf":`...)
	b = strconv.AppendBool(b, t.IsLeaf)
	b = append(b, `,"grad_fn":`...)
	if t.GradFn == "" {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendQuote(b, t.GradFn)
	}
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, int64(t.Version), 10)
	return append(b, '}')
}

// tensor reads an answer's "tensor" object.
func (s *scanner) tensor() (*TensorState, error) {
	t := &TensorState{Shape: []int{}, Values: []float64{}}
	var seen uint8
	err := s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "shape":
			t.Shape, err = s.ints(t.Shape)
			seen |= 1
		case "values":
			t.Values, err = s.floats(t.Values)
			seen |= 2
		case "requires_grad":
			t.RequiresGrad, err = s.boolean()
		case "is_leaf":
			t.IsLeaf, err = s.boolean()
		case "grad_fn":
			if s.peek() == 'n' {
				_, err = s.value() // null
				break
			}
			t.GradFn, err = s.str()
		case "version":
			t.Version, err = s.int()
		default:
			_, err = s.value()
		}
		return err
	})
	if err == nil && seen != 3 {
		err = errors.New(`a tensor needs "shape" and "values"`)
	}
	return t, err
}

// grads reads an answer's "grads" array.
func (s *scanner) grads() ([]Grad, error) {
	var out []Grad
	err := s.array(func() error {
		var g Grad
		err := s.object(func(key []byte) error {
			var err error
			switch string(key) {
			case "handle":
				g.Handle, err = s.int()
			case "values":
				g.Values, err = s.floats([]float64{})
			default:
				_, err = s.value()
			}
			return err
		})
		out = append(out, g)
		return err
	})
	return out, err
}

// equalFloats reports whether a and b hold the same numbers, NaN equal to NaN.
func equalFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
}
