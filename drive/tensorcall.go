package drive

import (
	"fmt"
	"strconv"
)

// TensorOp is a layer-5 call: an operation of an autograd program, on
// tensors named by handle (PROTOCOL.md, "Layer 5: autograd programs").
type TensorOp string

// The layer-5 calls. Each is PyTorch's operation of the same name on
// float64 tensors; the in-place ones end with an underscore.
const (
	TensorLeaf       TensorOp = "leaf"        // torch.tensor(values).reshape(shape), requires_grad as asked
	TensorAdd        TensorOp = "add"         // a + b
	TensorSub        TensorOp = "sub"         // a - b
	TensorMul        TensorOp = "mul"         // a * b
	TensorDiv        TensorOp = "div"         // a / b
	TensorMatmul     TensorOp = "matmul"      // a @ b
	TensorNeg        TensorOp = "neg"         // -a
	TensorExp        TensorOp = "exp"         // a.exp()
	TensorLog        TensorOp = "log"         // a.log()
	TensorTanh       TensorOp = "tanh"        // a.tanh()
	TensorRelu       TensorOp = "relu"        // a.relu()
	TensorSum        TensorOp = "sum"         // a.sum()
	TensorPow        TensorOp = "pow"         // a ** exponent
	TensorReshape    TensorOp = "reshape"     // a.reshape(shape)
	TensorSlice      TensorOp = "slice"       // a[start:stop], along dimension 0
	TensorDetach     TensorOp = "detach"      // a.detach()
	TensorData       TensorOp = "data"        // a.data
	TensorAddInPlace TensorOp = "add_"        // target.add_(b or scalar)
	TensorSubInPlace TensorOp = "sub_"        // target.sub_(b or scalar)
	TensorMulInPlace TensorOp = "mul_"        // target.mul_(b or scalar)
	TensorDivInPlace TensorOp = "div_"        // target.div_(b or scalar)
	TensorZero       TensorOp = "zero_"       // target.zero_()
	TensorBackward   TensorOp = "backward"    // target.backward(retain_graph=...)
	TensorZeroGrad   TensorOp = "zero_grad"   // target.grad = None (the current release's zero_grad)
	TensorRetainGrad TensorOp = "retain_grad" // target.retain_grad()
	TensorDrop       TensorOp = "drop"        // del target: the program lets go of it
	TensorEnd        TensorOp = "end"         // the program is over: the driver drops every handle
)

// tensorField is a field a layer-5 call may carry.
type tensorField uint16

const (
	tHandle tensorField = 1 << iota
	tTarget
	tA
	tB
	tShape
	tValues
	tRequiresGrad
	tExponent
	tStart
	tStop
	tScalar
	tRetainGraph
)

// tensorRows says which fields each layer-5 call carries: required, and
// optional (an in-place op by a tensor or by a number). PROTOCOL.md and
// protocol.schema.json list the same.
var tensorRows = map[TensorOp]struct{ required, optional tensorField }{
	TensorLeaf:       {tHandle | tShape | tValues | tRequiresGrad, 0},
	TensorAdd:        {tHandle | tA | tB, 0},
	TensorSub:        {tHandle | tA | tB, 0},
	TensorMul:        {tHandle | tA | tB, 0},
	TensorDiv:        {tHandle | tA | tB, 0},
	TensorMatmul:     {tHandle | tA | tB, 0},
	TensorNeg:        {tHandle | tA, 0},
	TensorExp:        {tHandle | tA, 0},
	TensorLog:        {tHandle | tA, 0},
	TensorTanh:       {tHandle | tA, 0},
	TensorRelu:       {tHandle | tA, 0},
	TensorSum:        {tHandle | tA, 0},
	TensorPow:        {tHandle | tA | tExponent, 0},
	TensorReshape:    {tHandle | tA | tShape, 0},
	TensorSlice:      {tHandle | tA | tStart | tStop, 0},
	TensorDetach:     {tHandle | tA, 0},
	TensorData:       {tHandle | tA, 0},
	TensorAddInPlace: {tTarget, tB | tScalar},
	TensorSubInPlace: {tTarget, tB | tScalar},
	TensorMulInPlace: {tTarget, tB | tScalar},
	TensorDivInPlace: {tTarget, tB | tScalar},
	TensorZero:       {tTarget, 0},
	TensorBackward:   {tTarget | tRetainGraph, 0},
	TensorZeroGrad:   {tTarget, 0},
	TensorRetainGrad: {tTarget, 0},
	TensorDrop:       {tTarget, 0},
	TensorEnd:        {0, 0},
}

// TensorOps lists the layer-5 calls, in the order of PROTOCOL.md's table.
func TensorOps() []TensorOp {
	return []TensorOp{TensorLeaf, TensorAdd, TensorSub, TensorMul, TensorDiv, TensorMatmul,
		TensorNeg, TensorExp, TensorLog, TensorTanh, TensorRelu, TensorSum, TensorPow,
		TensorReshape, TensorSlice, TensorDetach, TensorData,
		TensorAddInPlace, TensorSubInPlace, TensorMulInPlace, TensorDivInPlace, TensorZero,
		TensorBackward, TensorZeroGrad, TensorRetainGrad, TensorDrop, TensorEnd}
}

// Makes reports whether the call makes a tensor, under its Handle.
func (op TensorOp) Makes() bool { return tensorRows[op].required&tHandle != 0 }

// InPlace reports whether the call writes its Target in place.
func (op TensorOp) InPlace() bool {
	switch op {
	case TensorAddInPlace, TensorSubInPlace, TensorMulInPlace, TensorDivInPlace, TensorZero:
		return true
	}
	return false
}

// TensorCall is one call of a layer-5 program. Tensors are named by
// handles that tlcheck fixes before the run: a call that makes a tensor
// gives it Handle; the calls after it name it by that number (A, B,
// Target). Everything is float64.
type TensorCall struct {
	Op           TensorOp
	Handle       int       // a call that makes a tensor: its handle
	Target       int       // in-place ops, backward, zero_grad, retain_grad, drop
	A, B         int       // operands; B also for an in-place op by a tensor
	Shape        []int     // leaf, reshape: [] is zero-dimensional
	Values       []float64 // leaf: row-major, as many as the shape holds
	RequiresGrad bool      // leaf
	Exponent     float64   // pow
	Start, Stop  int       // slice: a[Start:Stop] along dimension 0
	Scalar       float64   // an in-place op by a number (ByScalar)
	ByScalar     bool      // the in-place op is by Scalar, not by tensor B
	RetainGraph  bool      // backward
	NoGrad       bool      // any call: made under torch.no_grad()
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
	row := tensorRows[c.Op]
	f := row.required
	if row.optional != 0 {
		if c.ByScalar {
			f |= tScalar
		} else {
			f |= tB
		}
	}
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
	if f&tHandle != 0 {
		num("handle", c.Handle)
	}
	if f&tTarget != 0 {
		num("target", c.Target)
	}
	if f&tA != 0 {
		num("a", c.A)
	}
	if f&tB != 0 {
		num("b", c.B)
	}
	if f&tShape != 0 {
		b = append(b, `,"shape":`...)
		b = appendInts(b, c.Shape)
	}
	if f&tValues != 0 {
		b = append(b, `,"values":`...)
		b = AppendFloats(b, c.Values)
	}
	if f&tRequiresGrad != 0 {
		flag("requires_grad", c.RequiresGrad)
	}
	if f&tExponent != 0 {
		b = append(b, `,"exponent":`...)
		b = AppendFloat(b, c.Exponent)
	}
	if f&tStart != 0 {
		num("start", c.Start)
	}
	if f&tStop != 0 {
		num("stop", c.Stop)
	}
	if f&tScalar != 0 {
		b = append(b, `,"scalar":`...)
		b = AppendFloat(b, c.Scalar)
	}
	if f&tRetainGraph != 0 {
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
	var seen tensorField
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
			seen |= tHandle
		case "target":
			c.Target, err = s.int()
			seen |= tTarget
		case "a":
			c.A, err = s.int()
			seen |= tA
		case "b":
			c.B, err = s.int()
			seen |= tB
		case "shape":
			c.Shape, err = s.ints([]int{})
			seen |= tShape
		case "values":
			c.Values, err = s.floats([]float64{})
			seen |= tValues
		case "requires_grad":
			c.RequiresGrad, err = s.boolean()
			seen |= tRequiresGrad
		case "exponent":
			c.Exponent, err = s.float()
			seen |= tExponent
		case "start":
			c.Start, err = s.int()
			seen |= tStart
		case "stop":
			c.Stop, err = s.int()
			seen |= tStop
		case "scalar":
			c.Scalar, err = s.float()
			c.ByScalar = true
			seen |= tScalar
		case "retain_graph":
			c.RetainGraph, err = s.boolean()
			seen |= tRetainGraph
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
	row, ok := tensorRows[TensorOp(op)]
	if !ok {
		return TensorCall{}, id, false, fmt.Errorf("op %q is not a layer-5 call (the calls are %v and reset)", op, TensorOps())
	}
	c.Op = TensorOp(op)
	if missing := row.required &^ seen; missing != 0 {
		return TensorCall{}, id, false, fmt.Errorf("%s needs %s", op, tensorFieldNames(row.required))
	}
	if row.optional != 0 && seen&row.optional != tB && seen&row.optional != tScalar {
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

func tensorFieldNames(f tensorField) string {
	var out []string
	for i, n := range []string{"handle", "target", "a", "b", "shape", "values", "requires_grad", "exponent", "start", "stop", "scalar", "retain_graph"} {
		if f&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return fmt.Sprint(out)
}
