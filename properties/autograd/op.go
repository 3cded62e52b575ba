package autograd

// Op is an operation of an autograd program: a call of the protocol's
// layer 5 (PROTOCOL.md, "Layer 5: autograd programs") or a step only the
// in-process engine takes. Each is PyTorch's operation of the same name
// on float64 tensors; the in-place ones end with an underscore.
type Op string

// The operations. The first 27 are layer-5 calls, in the order of
// PROTOCOL.md's table; the last three exist only in process (see Where).
const (
	Leaf       Op = "leaf"        // torch.tensor(values).reshape(shape), requires_grad as asked
	Add        Op = "add"         // a + b
	Sub        Op = "sub"         // a - b
	Mul        Op = "mul"         // a * b
	Div        Op = "div"         // a / b
	Matmul     Op = "matmul"      // a @ b
	Neg        Op = "neg"         // -a
	Exp        Op = "exp"         // a.exp()
	Log        Op = "log"         // a.log()
	Tanh       Op = "tanh"        // a.tanh()
	Relu       Op = "relu"        // a.relu()
	Sum        Op = "sum"         // a.sum()
	Pow        Op = "pow"         // a ** exponent
	Reshape    Op = "reshape"     // a.reshape(shape)
	Slice      Op = "slice"       // a[start:stop], along dimension 0
	Detach     Op = "detach"      // a.detach()
	Data       Op = "data"        // a.data
	AddInPlace Op = "add_"        // target.add_(b or scalar)
	SubInPlace Op = "sub_"        // target.sub_(b or scalar)
	MulInPlace Op = "mul_"        // target.mul_(b or scalar)
	DivInPlace Op = "div_"        // target.div_(b or scalar)
	Zero       Op = "zero_"       // target.zero_()
	Backward   Op = "backward"    // target.backward(retain_graph=...)
	ZeroGrad   Op = "zero_grad"   // target.grad = None (the current release's zero_grad)
	RetainGrad Op = "retain_grad" // target.retain_grad()
	Drop       Op = "drop"        // del target: the program lets go of it
	End        Op = "end"         // the program is over: every handle dropped

	ClearGrads Op = "clear_grads" // every leaf's grad = None (a training loop's optimizer.zero_grad)
	ScopeEnter Op = "scope_enter" // a scope of the runtime opened: what is made in it is its
	ScopeExit  Op = "scope_exit"  // the innermost scope closed: what was made in it dropped
)

// Field is a field of a layer-5 call on the wire, one bit each.
type Field uint16

// The fields, in the order a call is written.
const (
	FHandle Field = 1 << iota
	FTarget
	FA
	FB
	FShape
	FValues
	FRequiresGrad
	FExponent
	FStart
	FStop
	FScalar
	FRetainGraph
)

var fieldNames = []string{"handle", "target", "a", "b", "shape", "values", "requires_grad", "exponent", "start", "stop", "scalar", "retain_graph"}

// Names lists the fields' protocol names, in the order a call is written.
func (f Field) Names() []string {
	var out []string
	for i, n := range fieldNames {
		if f&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Where says where an operation runs.
type Where uint8

const (
	// Wire: a layer-5 call of the protocol, sent to a driver (PyTorch's,
	// tfjs's, impldriver's).
	Wire Where = 1 << iota
	// InProcess: a step of the in-process programs run on impl/autograd
	// (a Kind names it).
	InProcess
)

// Row is everything the language says of one operation.
type Row struct {
	Op Op
	// Where it runs: on the wire, in process, or both.
	Where Where
	// Fields are the fields a call of it carries on the wire; Optional
	// the ones of which it carries exactly one (an in-place op by a
	// tensor, "b", or by a number, "scalar"). PROTOCOL.md and
	// protocol.schema.json list the same.
	Fields, Optional Field
}

// rows is the table: one row per operation.
var rows = []Row{
	{Leaf, Wire | InProcess, FHandle | FShape | FValues | FRequiresGrad, 0},
	{Add, Wire | InProcess, FHandle | FA | FB, 0},
	{Sub, Wire | InProcess, FHandle | FA | FB, 0},
	{Mul, Wire | InProcess, FHandle | FA | FB, 0},
	{Div, Wire | InProcess, FHandle | FA | FB, 0},
	{Matmul, Wire, FHandle | FA | FB, 0},
	{Neg, Wire | InProcess, FHandle | FA, 0},
	{Exp, Wire | InProcess, FHandle | FA, 0},
	{Log, Wire | InProcess, FHandle | FA, 0},
	{Tanh, Wire | InProcess, FHandle | FA, 0},
	{Relu, Wire | InProcess, FHandle | FA, 0},
	{Sum, Wire | InProcess, FHandle | FA, 0},
	{Pow, Wire | InProcess, FHandle | FA | FExponent, 0},
	{Reshape, Wire | InProcess, FHandle | FA | FShape, 0},
	{Slice, Wire | InProcess, FHandle | FA | FStart | FStop, 0},
	{Detach, Wire | InProcess, FHandle | FA, 0},
	{Data, Wire | InProcess, FHandle | FA, 0},
	{AddInPlace, Wire | InProcess, FTarget, FB | FScalar},
	{SubInPlace, Wire | InProcess, FTarget, FB | FScalar},
	{MulInPlace, Wire | InProcess, FTarget, FB | FScalar},
	{DivInPlace, Wire | InProcess, FTarget, FB | FScalar},
	{Zero, Wire | InProcess, FTarget, 0},
	{Backward, Wire | InProcess, FTarget | FRetainGraph, 0},
	{ZeroGrad, Wire | InProcess, FTarget, 0},
	{RetainGrad, Wire | InProcess, FTarget, 0},
	{Drop, Wire | InProcess, FTarget, 0},
	{End, Wire, 0, 0},
	{ClearGrads, InProcess, 0, 0},
	{ScopeEnter, InProcess, 0, 0},
	{ScopeExit, InProcess, 0, 0},
}

// byOp indexes rows by operation.
var byOp = func() map[Op]*Row {
	m := make(map[Op]*Row, len(rows))
	for i := range rows {
		m[rows[i].Op] = &rows[i]
	}
	return m
}()

// Lookup returns op's row, and whether op is an operation of the language.
func Lookup(op Op) (Row, bool) {
	r, ok := byOp[op]
	if !ok {
		return Row{}, false
	}
	return *r, true
}

// Rows lists every operation's row, the layer-5 calls first in the order
// of PROTOCOL.md's table.
func Rows() []Row { return append([]Row(nil), rows...) }

// Ops lists the operations that run where says (any of its bits), in the
// table's order: Ops(Wire) is PROTOCOL.md's list of layer-5 calls.
func Ops(where Where) []Op {
	var out []Op
	for _, r := range rows {
		if r.Where&where != 0 {
			out = append(out, r.Op)
		}
	}
	return out
}

// Fields returns the fields a call of op carries on the wire: required,
// and optional (one of them exactly). An op the wire does not take has
// none.
func (op Op) Fields() (required, optional Field) {
	if r, ok := byOp[op]; ok && r.Where&Wire != 0 {
		return r.Fields, r.Optional
	}
	return 0, 0
}

// IsCall reports whether op is a layer-5 call of the protocol.
func (op Op) IsCall() bool {
	r, ok := byOp[op]
	return ok && r.Where&Wire != 0
}

// Makes reports whether the call makes a tensor, under its Handle.
func (op Op) Makes() bool {
	r, ok := byOp[op]
	return ok && r.Fields&FHandle != 0
}

// InPlace reports whether the call writes its Target in place.
func (op Op) InPlace() bool {
	switch op {
	case AddInPlace, SubInPlace, MulInPlace, DivInPlace, Zero:
		return true
	}
	return false
}

// Operands is the number of tensors the call reads besides its target:
// 2 for a binary op, 1 for a unary op or a view, 0 else (an in-place op
// by a tensor reads B: see Call.Uses).
func (op Op) Operands() int {
	r := byOp[op]
	if r == nil {
		return 0
	}
	n := 0
	if r.Fields&FA != 0 {
		n++
	}
	if r.Fields&FB != 0 {
		n++
	}
	return n
}

// String is the op's name.
func (op Op) String() string { return string(op) }
