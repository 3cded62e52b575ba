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
	f := (*autograd.Call)(c).Fields()
	num := func(key string, n int) {
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	flag := func(key string, v bool) {
		b = append(b, `,"`...)
		b = append(b, key...)
		b = append(b, `":`...)
		b = strconv.AppendBool(b, v)
	}
	if f&autograd.FHandle != 0 {
		num("handle", c.Handle)
	}
	if f&autograd.FTarget != 0 {
		num("target", c.Target)
	}
	if f&autograd.FA != 0 {
		num("a", c.A)
	}
	if f&autograd.FB != 0 {
		num("b", c.B)
	}
	if f&autograd.FShape != 0 {
		b = append(b, `,"shape":`...)
		b = appendInts(b, c.Shape)
	}
	if f&autograd.FValues != 0 {
		b = append(b, `,"values":`...)
		b = AppendFloats(b, c.Values)
	}
	if f&autograd.FRequiresGrad != 0 {
		flag("requires_grad", c.RequiresGrad)
	}
	if f&autograd.FExponent != 0 {
		b = append(b, `,"exponent":`...)
		b = AppendFloat(b, c.Exponent)
	}
	if f&autograd.FStart != 0 {
		num("start", c.Start)
	}
	if f&autograd.FStop != 0 {
		num("stop", c.Stop)
	}
	if f&autograd.FScalar != 0 {
		b = append(b, `,"scalar":`...)
		b = AppendFloat(b, c.Scalar)
	}
	if f&autograd.FRetainGraph != 0 {
		flag("retain_graph", c.RetainGraph)
	}
	if c.NoGrad {
		flag("no_grad", true)
	}
	return append(b, '}')
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
	id = -1
	s := scanner{b: line}
	var seen autograd.Field
	op := ""
	err = s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "id":
			var n uint64
			n, err = s.uint(63)
			id = int64(n)
		case "op":
			op, err = s.str()
		case "handle":
			c.Handle, err = s.int()
			seen |= autograd.FHandle
		case "target":
			c.Target, err = s.int()
			seen |= autograd.FTarget
		case "a":
			c.A, err = s.int()
			seen |= autograd.FA
		case "b":
			c.B, err = s.int()
			seen |= autograd.FB
		case "shape":
			c.Shape, err = s.ints([]int{})
			seen |= autograd.FShape
		case "values":
			c.Values, err = s.floats([]float64{})
			seen |= autograd.FValues
		case "requires_grad":
			c.RequiresGrad, err = s.boolean()
			seen |= autograd.FRequiresGrad
		case "exponent":
			c.Exponent, err = s.float()
			seen |= autograd.FExponent
		case "start":
			c.Start, err = s.int()
			seen |= autograd.FStart
		case "stop":
			c.Stop, err = s.int()
			seen |= autograd.FStop
		case "scalar":
			c.Scalar, err = s.float()
			c.ByScalar = true
			seen |= autograd.FScalar
		case "retain_graph":
			c.RetainGraph, err = s.boolean()
			seen |= autograd.FRetainGraph
		case "no_grad":
			c.NoGrad, err = s.boolean()
		default:
			_, err = s.value() // unknown fields are allowed and ignored
		}
		return err
	})
	if err == nil {
		err = s.end()
	}
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
		return TensorCall{}, id, false, fmt.Errorf("%s needs %v", op, required.Names())
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
