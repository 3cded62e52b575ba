package drive

import (
	"fmt"
	"strconv"

	"github.com/tlcheck/tlcheck/properties/autograd"
)

// TensorOp is a layer-5 call: an operation of an autograd program, on
// tensors named by handle (PROTOCOL.md, "Layer 5: autograd programs"). It
// is the autograd language's Op (package properties/autograd, which holds
// the one table of operations, their fields on the wire and where each
// runs).
type TensorOp = autograd.Op

// The layer-5 calls. Each is PyTorch's operation of the same name on
// float64 tensors; the in-place ones end with an underscore.
const (
	TensorLeaf       = autograd.Leaf       // torch.tensor(values).reshape(shape), requires_grad as asked
	TensorAdd        = autograd.Add        // a + b
	TensorSub        = autograd.Sub        // a - b
	TensorMul        = autograd.Mul        // a * b
	TensorDiv        = autograd.Div        // a / b
	TensorMatmul     = autograd.Matmul     // a @ b
	TensorNeg        = autograd.Neg        // -a
	TensorExp        = autograd.Exp        // a.exp()
	TensorLog        = autograd.Log        // a.log()
	TensorTanh       = autograd.Tanh       // a.tanh()
	TensorRelu       = autograd.Relu       // a.relu()
	TensorSum        = autograd.Sum        // a.sum()
	TensorPow        = autograd.Pow        // a ** exponent
	TensorReshape    = autograd.Reshape    // a.reshape(shape)
	TensorSlice      = autograd.Slice      // a[start:stop], along dimension 0
	TensorDetach     = autograd.Detach     // a.detach()
	TensorData       = autograd.Data       // a.data
	TensorAddInPlace = autograd.AddInPlace // target.add_(b or scalar)
	TensorSubInPlace = autograd.SubInPlace // target.sub_(b or scalar)
	TensorMulInPlace = autograd.MulInPlace // target.mul_(b or scalar)
	TensorDivInPlace = autograd.DivInPlace // target.div_(b or scalar)
	TensorZero       = autograd.Zero       // target.zero_()
	TensorBackward   = autograd.Backward   // target.backward(retain_graph=...)
	TensorZeroGrad   = autograd.ZeroGrad   // target.grad = None (the current release's zero_grad)
	TensorRetainGrad = autograd.RetainGrad // target.retain_grad()
	TensorDrop       = autograd.Drop       // del target: the program lets go of it
	TensorEnd        = autograd.End        // the program is over: the driver drops every handle
)

// TensorOps lists the layer-5 calls, in the order of PROTOCOL.md's table.
func TensorOps() []TensorOp { return autograd.Ops(autograd.Wire) }

// TensorCall is one call of a layer-5 program: the autograd language's
// Call, with the protocol's codec. Tensors are named by handles that
// tlcheck fixes before the run: a call that makes a tensor gives it
// Handle; the calls after it name it by that number (A, B, Target).
// Everything is float64.
type TensorCall autograd.Call

// tensorCalls and agCalls convert a program between drive's calls and the
// autograd language's (the same struct).
func tensorCalls(cs []autograd.Call) []TensorCall {
	out := make([]TensorCall, len(cs))
	for i := range cs {
		out[i] = TensorCall(cs[i])
	}
	return out
}

func agCalls(cs []TensorCall) []autograd.Call {
	out := make([]autograd.Call, len(cs))
	for i := range cs {
		out[i] = autograd.Call(cs[i])
	}
	return out
}

// AppendJSON appends the call as a protocol line without its id:
// {"op":"mul","handle":3,"a":1,"b":2}.
func (c *TensorCall) AppendJSON(b []byte) []byte { return c.appendJSON(b, -1) }

func (c *TensorCall) appendJSON(b []byte, id int64) []byte {
	b = append(b, '{')
	if id >= 0 {
		b = append(b, `"id":`...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, ',')
	}
	b = append(b, `"op":`...)
	b = strconv.AppendQuote(b, string(c.Op))
	b = tensorCodec.appendFields(b, c, (*autograd.Call)(c).Fields()|fNoGrad)
	return append(b, '}')
}

// tensorCodec is the codec of layer-5 calls: their fields, declared once
// (their bits and keys are the autograd language's, autograd.Field), in
// the order a call line writes them, then no_grad, which any call may
// carry and a line writes only when it is set.
var tensorCodec = codec[TensorCall, autograd.Field]{rows: []fieldRow[TensorCall, autograd.Field]{
	intField(autograd.FHandle, key(autograd.FHandle), func(c *TensorCall) *int { return &c.Handle }),
	intField(autograd.FTarget, key(autograd.FTarget), func(c *TensorCall) *int { return &c.Target }),
	intField(autograd.FA, key(autograd.FA), func(c *TensorCall) *int { return &c.A }),
	intField(autograd.FB, key(autograd.FB), func(c *TensorCall) *int { return &c.B }),
	intsField(autograd.FShape, key(autograd.FShape), func(c *TensorCall) *[]int { return &c.Shape }),
	floatsField(autograd.FValues, key(autograd.FValues), func(c *TensorCall) *[]float64 { return &c.Values }),
	boolField(autograd.FRequiresGrad, key(autograd.FRequiresGrad), func(c *TensorCall) *bool { return &c.RequiresGrad }),
	floatField(autograd.FExponent, key(autograd.FExponent), func(c *TensorCall) *float64 { return &c.Exponent }),
	intField(autograd.FStart, key(autograd.FStart), func(c *TensorCall) *int { return &c.Start }),
	intField(autograd.FStop, key(autograd.FStop), func(c *TensorCall) *int { return &c.Stop }),
	func() fieldRow[TensorCall, autograd.Field] {
		r := floatField(autograd.FScalar, key(autograd.FScalar), func(c *TensorCall) *float64 { return &c.Scalar })
		read := r.read
		r.read = func(s *scanner, c *TensorCall) error { c.ByScalar = true; return read(s, c) } // by a number, not by b
		return r
	}(),
	boolField(autograd.FRetainGraph, key(autograd.FRetainGraph), func(c *TensorCall) *bool { return &c.RetainGraph }),
	func() fieldRow[TensorCall, autograd.Field] {
		r := boolField(fNoGrad, "no_grad", func(c *TensorCall) *bool { return &c.NoGrad })
		r.omit = func(c *TensorCall) bool { return !c.NoGrad }
		return r
	}(),
}}

// fNoGrad is no_grad's bit in tensorCodec: any call may carry it, so it is
// no field of an op's row.
const fNoGrad autograd.Field = 1 << 15

// key is the protocol's key of the autograd language's field f.
func key(f autograd.Field) string { return f.Names()[0] }

// floatField, floatsField and boolField make the rows of layer 5's kinds
// of field beside codec.go's, at the call's field that at returns.
func floatField[C any, F fieldSet](bit F, key string, at func(*C) *float64) fieldRow[C, F] {
	return fieldRow[C, F]{bit: bit, key: key,
		write: func(b []byte, c *C) []byte { return appendFloat(b, *at(c)) },
		read: func(s *scanner, c *C) (err error) {
			*at(c), err = s.float()
			return err
		}}
}

// floatsField reads into a slice that is not nil, empty for [].
func floatsField[C any, F fieldSet](bit F, key string, at func(*C) *[]float64) fieldRow[C, F] {
	return fieldRow[C, F]{bit: bit, key: key,
		write: func(b []byte, c *C) []byte { return appendFloats(b, *at(c)) },
		read: func(s *scanner, c *C) (err error) {
			*at(c), err = s.floats([]float64{})
			return err
		}}
}

func boolField[C any, F fieldSet](bit F, key string, at func(*C) *bool) fieldRow[C, F] {
	return fieldRow[C, F]{bit: bit, key: key,
		write: func(b []byte, c *C) []byte { return strconv.AppendBool(b, *at(c)) },
		read: func(s *scanner, c *C) (err error) {
			*at(c), err = s.boolean()
			return err
		}}
}

func appendInts(b []byte, ns []int) []byte {
	b = append(b, '[')
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, ']')
}

// ParseTensorCall reads a layer-5 call line, as the harness sends it or a
// calls file holds it. It returns the call and its id (-1 if it has
// none); an op of "reset" returns reset true and a zero call.
func ParseTensorCall(line []byte) (c TensorCall, id int64, reset bool, err error) {
	id, op, seen, err := tensorCodec.parse(line, &c)
	if err != nil {
		return TensorCall{}, id, false, err
	}
	if op == "reset" {
		return TensorCall{}, id, true, nil
	}
	if !TensorOp(op).IsCall() {
		return TensorCall{}, id, false, fmt.Errorf("op %q is not a layer-5 call (the calls are %v and reset)", op, TensorOps())
	}
	c.Op = TensorOp(op)
	required, optional := c.Op.Fields()
	if missing := required &^ seen; missing != 0 {
		return TensorCall{}, id, false, fmt.Errorf("%s needs %s", op, tensorCodec.names(required))
	}
	if optional != 0 && seen&optional != autograd.FB && seen&optional != autograd.FScalar {
		return TensorCall{}, id, false, fmt.Errorf(`%s needs "b" (a tensor) or "scalar" (a number), one of them`, op)
	}
	if c.Op == TensorLeaf {
		n := 1
		for _, d := range c.Shape {
			n *= d
		}
		if n != len(c.Values) {
			return TensorCall{}, id, false, fmt.Errorf("leaf of shape %v needs %d values, has %d", c.Shape, n, len(c.Values))
		}
	}
	return c, id, false, nil
}
