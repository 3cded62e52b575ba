package properties

import (
	"slices"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// A call is one row: everything the package knows about one runtime call a
// program may make. Decoding, encoding, listing, parsing, shrinking,
// drawing with rapid and gopter, and applying a step to the runtime all
// read this table, so a call of a new layer is one row here (and, when it
// takes a new kind of operand, one operand kind in operands.go).
// TestCallTable fails by name when a row is incomplete.
type call struct {
	op traces.Op

	// code and width are the op bytes that decode to this call: code up to
	// code+width-1. They are permanent: a row added later takes bytes from
	// the reserved range at the top, so the bytes of a saved program keep
	// their meaning. width is the call's weight in generated programs; 0
	// means the harness makes the call but never generates it (end).
	code, width int

	operands []operand // what the step carries, in byte order

	// needs says what the call needs of the program's shape; without it
	// the call is sure to be a misuse, and the decoder turns it, three
	// times in four, into instead, which provides it.
	needs   func(shape) bool
	instead traces.Op

	// plainer, where set, returns the step as a plainer call that does the
	// same for a shrunk program (a struct with no fields as an alloc).
	plainer func(Step) (Step, bool)

	// after is the shape after the call; nil leaves it as it was.
	after func(shape, Step) shape

	// invoke makes the call st on rt with the step's operands resolved
	// into ev; a call that makes an object or hands out a buffer sets
	// ev.Addr to what rt returned.
	invoke func(rt *impl.Runtime, st *Step, ev *traces.Event) error

	// object says that the call makes an object, which then takes a
	// position among the live ones (Refs).
	object bool

	// prepare, where set, fills in what the call takes from the program's
	// own frames rather than from its operands (arena_get's slot and
	// variable); learn notes what the program learnt from the call (the
	// frame it entered, the buffer it was given). See frames.go.
	prepare func(s *session, st *Step, ev *traces.Event)
	learn   func(s *session, st *Step, ev *traces.Event, err error)
}

// reservedCode is the first op byte no call owns: bytes from here to 255
// decode to no step, and are where the calls of later layers go. Layer 3
// took 192 to 239 from it.
const reservedCode = 240

// calls is the table, layer 2 in the contract's order, then end, then
// layer 3.
var calls = []call{
	{op: traces.OpScopeEnter, code: 0, width: 21,
		after:  func(sh shape, _ Step) shape { sh.depth++; return sh },
		invoke: func(rt *impl.Runtime, _ *Step, _ *traces.Event) error { return rt.ScopeEnter() }},
	{op: traces.OpScopeExit, code: 21, width: 14,
		needs: hasScope, instead: traces.OpScopeEnter,
		after:  func(sh shape, _ Step) shape { sh.depth = max(sh.depth-1, 0); return sh },
		invoke: func(rt *impl.Runtime, _ *Step, _ *traces.Event) error { return rt.ScopeExit() }},
	{op: traces.OpAlloc, code: 35, width: 36, operands: []operand{operandSize}, object: true,
		needs: hasScope, instead: traces.OpScopeEnter,
		invoke: func(rt *impl.Runtime, _ *Step, ev *traces.Event) (err error) {
			ev.Addr, err = rt.Alloc(ev.Size)
			return err
		}},
	{op: traces.OpStructInit, code: 71, width: 14, operands: []operand{operandSize, operandFields}, object: true,
		needs: hasScope, instead: traces.OpScopeEnter,
		plainer: func(s Step) (Step, bool) {
			return Step{Op: traces.OpAlloc, Size: s.Size}, len(s.Fields) == 0 && s.Size != 0
		},
		invoke: func(rt *impl.Runtime, _ *Step, ev *traces.Event) (err error) {
			ev.Addr, err = rt.StructInit(ev.Size, ev.Fields)
			return err
		}},
	{op: traces.OpAcquire, code: 85, width: 21, operands: []operand{operandTarget},
		invoke: func(rt *impl.Runtime, _ *Step, ev *traces.Event) error { return rt.Acquire(ev.Addr) }},
	{op: traces.OpRelease, code: 106, width: 28, operands: []operand{operandTarget},
		invoke: func(rt *impl.Runtime, _ *Step, ev *traces.Event) error { return rt.Release(ev.Addr) }},
	{op: traces.OpRegister, code: 134, width: 16, operands: []operand{operandTarget},
		needs: hasScope, instead: traces.OpScopeEnter,
		invoke: func(rt *impl.Runtime, _ *Step, ev *traces.Event) error { return rt.Register(ev.Addr) }},
	{op: traces.OpUnregister, code: 150, width: 12, operands: []operand{operandTarget},
		invoke: func(rt *impl.Runtime, _ *Step, ev *traces.Event) error { return rt.Unregister(ev.Addr) }},
	{op: traces.OpParamRegister, code: 162, width: 16, operands: []operand{operandName, operandTarget},
		after:  func(sh shape, s Step) shape { return sh.register(s.Name) },
		invoke: func(rt *impl.Runtime, _ *Step, ev *traces.Event) error { return rt.ParamRegister(ev.Name, ev.Addr) }},
	{op: traces.OpParamRelease, code: 178, width: 14, operands: []operand{operandHeldName},
		needs: hasParam, instead: traces.OpParamRegister,
		after:  func(sh shape, s Step) shape { return sh.unregister(s.Name) },
		invoke: func(rt *impl.Runtime, _ *Step, ev *traces.Event) error { return rt.ParamRelease(ev.Name) }},
	{op: traces.OpEnd,
		invoke: func(rt *impl.Runtime, _ *Step, _ *traces.Event) error { return rt.End() }},

	// Layer 3: frames planned from their variables' lifetimes (frames.go).
	{op: traces.OpFnEnter, code: 192, width: 12, operands: []operand{operandKind, operandLives},
		after: func(sh shape, s Step) shape { return sh.enter(len(s.Lives)) },
		invoke: func(rt *impl.Runtime, st *Step, ev *traces.Event) error {
			if st.Method {
				return rt.MethodEnter(ev.Slots)
			}
			return rt.FnEnter(ev.Slots)
		},
		learn: func(s *session, st *Step, _ *traces.Event, _ error) { s.enterFrame(st) }},
	{op: traces.OpFnExit, code: 204, width: 8,
		needs: hasFrame, instead: traces.OpFnEnter,
		after:  func(sh shape, _ Step) shape { return sh.exit() },
		invoke: func(rt *impl.Runtime, _ *Step, _ *traces.Event) error { return rt.FnExit() },
		learn:  func(s *session, _ *Step, _ *traces.Event, _ error) { s.exitFrame() }},
	{op: traces.OpArenaGet, code: 212, width: 16, operands: []operand{operandSize},
		needs: hasVarToDefine, instead: traces.OpFnEnter,
		after: func(sh shape, _ Step) shape { return sh.define() },
		invoke: func(rt *impl.Runtime, _ *Step, ev *traces.Event) (err error) {
			ev.Addr, err = rt.ArenaGet(ev.Slot, ev.Size, ev.Var)
			return err
		},
		prepare: func(s *session, _ *Step, ev *traces.Event) { s.arenaSlot(ev) },
		learn:   func(s *session, _ *Step, ev *traces.Event, err error) { s.arenaGot(ev, err) }},
	{op: traces.OpRead, code: 228, width: 8, operands: []operand{operandVar},
		needs: hasDefined, instead: traces.OpArenaGet,
		invoke: func(rt *impl.Runtime, _ *Step, ev *traces.Event) error { return rt.Read(ev.Addr, ev.Size, ev.Var) }},
	{op: traces.OpWrite, code: 236, width: 4, operands: []operand{operandVar},
		needs: hasDefined, instead: traces.OpArenaGet,
		invoke: func(rt *impl.Runtime, _ *Step, ev *traces.Event) error { return rt.Write(ev.Addr, ev.Size, ev.Var) }},
}

func hasScope(sh shape) bool { return sh.depth > 0 }
func hasParam(sh shape) bool { return len(sh.names) > 0 }
func hasFrame(sh shape) bool { return len(sh.frames) > 0 }

// hasVarToDefine: the top frame has a declared variable left to define.
func hasVarToDefine(sh shape) bool {
	n := len(sh.frames)
	return n > 0 && sh.frames[n-1].stmt < sh.frames[n-1].vars
}

// hasDefined: the top frame has defined a variable, which is live at its
// own statement at least.
func hasDefined(sh shape) bool {
	n := len(sh.frames)
	return n > 0 && sh.frames[n-1].stmt > 0
}

// callOf returns op's row, or nil for an op no program calls.
func callOf(op traces.Op) *call {
	if int(op) < len(callByOp) {
		return callByOp[op]
	}
	return nil
}

// callByOp indexes calls by op; codeTable maps each op byte to its call,
// nil in the reserved range.
var callByOp, codeTable = func() (byOp []*call, byCode [256]*call) {
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

// creates reports whether the call makes an object, which then takes a
// position among the live ones.
func (c *call) creates() bool { return c.object }

// sized reports whether the call records a size, which the record must
// repeat: the size it was given, or the size of the variable it accesses.
func (c *call) sized() bool {
	return slices.Contains(c.operands, operandSize) || slices.Contains(c.operands, operandVar)
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
