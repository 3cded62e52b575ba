package flat

import (
	"slices"

	"github.com/tlcheck/tlcheck/traces"
)

// A Call is the syntax of one runtime call a program may make: its row of
// the table. Decoding, encoding, listing, parsing and shrinking read the
// table, and so do the harnesses that make the calls (package properties
// keys its invocations against impl's runtime by op), so a call of a new
// layer is one row here (and, when it takes a new kind of operand, one
// operand kind in operands.go) and one invocation there.
// TestCallTable fails by name when a row is incomplete.
type Call struct {
	op traces.Op

	// code and width are the op bytes that decode to this call: code up to
	// code+width-1. They are permanent: a row added later takes bytes from
	// the reserved range at the top, so the bytes of a saved program keep
	// their meaning. width is the call's weight in generated programs; 0
	// means the harness makes the call but never generates it (end).
	code, width int

	operands []Operand // what the step carries, in byte order

	// needs says what the call needs of the program's shape; without it
	// the call is sure to be a misuse, and the decoder turns it, three
	// times in four, into instead, which provides it.
	needs   func(Shape) bool
	instead traces.Op

	// plainer, where set, returns the step as a plainer call that does the
	// same for a shrunk program (a struct with no fields as an alloc).
	plainer func(Step) (Step, bool)

	// after is the shape after the call; nil leaves it as it was.
	after func(Shape, Step) Shape

	// object says that the call makes an object, which then takes a
	// position among the live ones (Refs).
	object bool
}

// reservedCode is the first op byte no call owns: bytes from here to 255
// decode to no step, and are where the calls of later layers go. Layer 3
// took 192 to 239 from it.
const reservedCode = 240

// calls is the table, layer 2 in the contract's order, then end, then
// layer 3.
var calls = []Call{
	{op: traces.OpScopeEnter, code: 0, width: 21,
		after: func(sh Shape, _ Step) Shape { sh.depth++; return sh }},
	{op: traces.OpScopeExit, code: 21, width: 14,
		needs: hasScope, instead: traces.OpScopeEnter,
		after: func(sh Shape, _ Step) Shape { sh.depth = max(sh.depth-1, 0); return sh }},
	{op: traces.OpAlloc, code: 35, width: 36, operands: []Operand{OperandSize}, object: true,
		needs: hasScope, instead: traces.OpScopeEnter},
	{op: traces.OpStructInit, code: 71, width: 14, operands: []Operand{OperandSize, OperandFields}, object: true,
		needs: hasScope, instead: traces.OpScopeEnter,
		plainer: func(s Step) (Step, bool) {
			return Step{Op: traces.OpAlloc, Size: s.Size}, len(s.Fields) == 0 && s.Size != 0
		}},
	{op: traces.OpAcquire, code: 85, width: 21, operands: []Operand{OperandTarget}},
	{op: traces.OpRelease, code: 106, width: 28, operands: []Operand{OperandTarget}},
	{op: traces.OpRegister, code: 134, width: 16, operands: []Operand{OperandTarget},
		needs: hasScope, instead: traces.OpScopeEnter},
	{op: traces.OpUnregister, code: 150, width: 12, operands: []Operand{OperandTarget}},
	{op: traces.OpParamRegister, code: 162, width: 16, operands: []Operand{OperandName, OperandTarget},
		after: func(sh Shape, s Step) Shape { return sh.register(s.Name) }},
	{op: traces.OpParamRelease, code: 178, width: 14, operands: []Operand{OperandHeldName},
		needs: hasParam, instead: traces.OpParamRegister,
		after: func(sh Shape, s Step) Shape { return sh.unregister(s.Name) }},
	{op: traces.OpEnd},

	// Layer 3: frames planned from their variables' lifetimes (frames.go).
	{op: traces.OpFnEnter, code: 192, width: 12, operands: []Operand{OperandKind, OperandLives},
		after: func(sh Shape, s Step) Shape { return sh.enter(len(s.Lives)) }},
	{op: traces.OpFnExit, code: 204, width: 8,
		needs: hasFrame, instead: traces.OpFnEnter,
		after: func(sh Shape, _ Step) Shape { return sh.exit() }},
	{op: traces.OpArenaGet, code: 212, width: 16, operands: []Operand{OperandSize},
		needs: hasVarToDefine, instead: traces.OpFnEnter,
		after: func(sh Shape, _ Step) Shape { return sh.define() }},
	{op: traces.OpRead, code: 228, width: 8, operands: []Operand{OperandVar},
		needs: hasDefined, instead: traces.OpArenaGet},
	{op: traces.OpWrite, code: 236, width: 4, operands: []Operand{OperandVar},
		needs: hasDefined, instead: traces.OpArenaGet},
}

func hasScope(sh Shape) bool { return sh.depth > 0 }
func hasParam(sh Shape) bool { return len(sh.names) > 0 }
func hasFrame(sh Shape) bool { return len(sh.frames) > 0 }

// hasVarToDefine: the top frame has a declared variable left to define.
func hasVarToDefine(sh Shape) bool {
	n := len(sh.frames)
	return n > 0 && sh.frames[n-1].stmt < sh.frames[n-1].vars
}

// hasDefined: the top frame has defined a variable, which is live at its
// own statement at least.
func hasDefined(sh Shape) bool {
	n := len(sh.frames)
	return n > 0 && sh.frames[n-1].stmt > 0
}

// CallOf returns op's row, or nil for an op no program calls. The row is
// the table's own: read it through its methods.
func CallOf(op traces.Op) *Call {
	if int(op) < len(callByOp) {
		return callByOp[op]
	}
	return nil
}

// callByOp indexes calls by op; codeTable maps each op byte to its call,
// nil in the reserved range.
var callByOp, codeTable = func() (byOp []*Call, byCode [256]*Call) {
	for i := range calls {
		c := &calls[i]
		for len(byOp) <= int(c.op) {
			byOp = append(byOp, nil)
		}
		byOp[c.op] = c
		for b := c.code; b < c.code+c.width; b++ {
			byCode[b] = c // TestCallTable checks that no two rows share a byte
		}
	}
	return byOp, byCode
}()

// Op is the call's op.
func (c *Call) Op() traces.Op { return c.op }

// Operands lists what a step of the call carries, in byte order. The
// slice is the table's: do not change it.
func (c *Call) Operands() []Operand { return c.operands }

// Creates reports whether the call makes an object, which then takes a
// position among the live ones.
func (c *Call) Creates() bool { return c.object }

// Generated reports whether programs make the call; end is made only by
// the harness, after the last step.
func (c *Call) Generated() bool { return c.width > 0 }

// Sized reports whether the call records a size, which the record must
// repeat: the size it was given, or the size of the variable it accesses.
func (c *Call) Sized() bool {
	return slices.Contains(c.operands, OperandSize) || slices.Contains(c.operands, OperandVar)
}

// Ops lists the calls a Program may make, in the contract's order.
func Ops() []traces.Op {
	var ops []traces.Op
	for _, c := range calls {
		if c.width > 0 {
			ops = append(ops, c.op)
		}
	}
	return ops
}
