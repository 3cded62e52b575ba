package properties

import (
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// An invocation is how the harness makes one call of the flat language
// (package flat holds its syntax: op bytes, operands, shape) on impl's
// runtime. A call of a new layer is a row of flat's table and one
// invocation here; TestEveryRowIsInvoked fails by name when one is
// missing on either side.
type invocation struct {
	// invoke makes the call st on rt with the step's operands resolved
	// into ev; a call that makes an object or hands out a buffer sets
	// ev.Addr to what rt returned.
	invoke func(rt *impl.Runtime, st *flat.Step, ev *traces.Event) error

	// prepare, where set, fills in what the call takes from the program's
	// own frames rather than from its operands (arena_get's slot and
	// variable); learn notes what the program learnt from the call (the
	// frame it entered, the buffer it was given). See frames.go.
	prepare func(s *session, st *flat.Step, ev *traces.Event)
	learn   func(s *session, st *flat.Step, ev *traces.Event, err error)
}

// invocations holds the invocation of every call of flat's table, by op.
var invocations = map[traces.Op]invocation{
	traces.OpScopeEnter: {invoke: func(rt *impl.Runtime, _ *flat.Step, _ *traces.Event) error { return rt.ScopeEnter() }},
	traces.OpScopeExit:  {invoke: func(rt *impl.Runtime, _ *flat.Step, _ *traces.Event) error { return rt.ScopeExit() }},
	traces.OpAlloc: {invoke: func(rt *impl.Runtime, _ *flat.Step, ev *traces.Event) (err error) {
		ev.Addr, err = rt.Alloc(ev.Size)
		return err
	}},
	traces.OpStructInit: {invoke: func(rt *impl.Runtime, _ *flat.Step, ev *traces.Event) (err error) {
		ev.Addr, err = rt.StructInit(ev.Size, ev.Fields)
		return err
	}},
	traces.OpAcquire:    {invoke: func(rt *impl.Runtime, _ *flat.Step, ev *traces.Event) error { return rt.Acquire(ev.Addr) }},
	traces.OpRelease:    {invoke: func(rt *impl.Runtime, _ *flat.Step, ev *traces.Event) error { return rt.Release(ev.Addr) }},
	traces.OpRegister:   {invoke: func(rt *impl.Runtime, _ *flat.Step, ev *traces.Event) error { return rt.Register(ev.Addr) }},
	traces.OpUnregister: {invoke: func(rt *impl.Runtime, _ *flat.Step, ev *traces.Event) error { return rt.Unregister(ev.Addr) }},
	traces.OpParamRegister: {invoke: func(rt *impl.Runtime, _ *flat.Step, ev *traces.Event) error {
		return rt.ParamRegister(ev.Name, ev.Addr)
	}},
	traces.OpParamRelease: {invoke: func(rt *impl.Runtime, _ *flat.Step, ev *traces.Event) error { return rt.ParamRelease(ev.Name) }},
	traces.OpEnd:          {invoke: func(rt *impl.Runtime, _ *flat.Step, _ *traces.Event) error { return rt.End() }},

	// Layer 3: frames planned from their variables' lifetimes (frames.go).
	traces.OpFnEnter: {
		invoke: func(rt *impl.Runtime, st *flat.Step, ev *traces.Event) error {
			if st.Method {
				return rt.MethodEnter(ev.Slots)
			}
			return rt.FnEnter(ev.Slots)
		},
		learn: func(s *session, st *flat.Step, _ *traces.Event, _ error) { s.enterFrame(st) }},
	traces.OpFnExit: {
		invoke: func(rt *impl.Runtime, _ *flat.Step, _ *traces.Event) error { return rt.FnExit() },
		learn:  func(s *session, _ *flat.Step, _ *traces.Event, _ error) { s.frames.Exit() }},
	traces.OpArenaGet: {
		invoke: func(rt *impl.Runtime, _ *flat.Step, ev *traces.Event) (err error) {
			ev.Addr, err = rt.ArenaGet(ev.Slot, ev.Size, ev.Var)
			return err
		},
		prepare: func(s *session, _ *flat.Step, ev *traces.Event) { s.frames.ArenaSlot(ev) },
		learn:   func(s *session, _ *flat.Step, ev *traces.Event, err error) { s.frames.ArenaGot(ev, err) }},
	traces.OpRead: {invoke: func(rt *impl.Runtime, _ *flat.Step, ev *traces.Event) error { return rt.Read(ev.Addr, ev.Size, ev.Var) }},
	traces.OpWrite: {invoke: func(rt *impl.Runtime, _ *flat.Step, ev *traces.Event) error {
		return rt.Write(ev.Addr, ev.Size, ev.Var)
	}},
}

// invocationByOp indexes invocations by op, as apply looks them up at
// every call.
var invocationByOp = func() (byOp []*invocation) {
	for op, inv := range invocations {
		for len(byOp) <= int(op) {
			byOp = append(byOp, nil)
		}
		byOp[op] = &inv
	}
	return byOp
}()

// invocationOf returns op's invocation, or nil for an op the harness
// cannot make.
func invocationOf(op traces.Op) *invocation {
	if int(op) < len(invocationByOp) {
		return invocationByOp[op]
	}
	return nil
}

// resolvers sets each kind of operand in the event the call makes,
// turning refs into addresses against what the model holds alive.
var resolvers = [...]func(sess *session, op traces.Op, s *flat.Step, ev *traces.Event){
	flat.OperandSize: func(_ *session, _ traces.Op, s *flat.Step, ev *traces.Event) { ev.Size = s.Size },
	flat.OperandFields: func(sess *session, op traces.Op, s *flat.Step, ev *traces.Event) {
		ev.Fields = make([]traces.Addr, len(s.Fields))
		for i := range s.Fields {
			ev.Fields[i] = sess.resolve(op, &s.Fields[i])
		}
	},
	flat.OperandTarget: func(sess *session, op traces.Op, s *flat.Step, ev *traces.Event) {
		ev.Addr = sess.resolve(op, &s.Target)
	},
	flat.OperandName:     func(_ *session, _ traces.Op, s *flat.Step, ev *traces.Event) { ev.Name = s.Name },
	flat.OperandHeldName: func(_ *session, _ traces.Op, s *flat.Step, ev *traces.Event) { ev.Name = s.Name },
	flat.OperandKind:     func(*session, traces.Op, *flat.Step, *traces.Event) {}, // the invocation picks the call
	flat.OperandLives:    func(sess *session, _ traces.Op, s *flat.Step, ev *traces.Event) { sess.planFrame(s, ev) },
	flat.OperandVar:      func(sess *session, _ traces.Op, s *flat.Step, ev *traces.Event) { sess.frames.ResolveVar(s, ev) },
}
