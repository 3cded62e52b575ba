package flat

import (
	"maps"
	"slices"
	"sync"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// Choose resolves r, an operand of a call of op, into an address: among
// the addresses handed out (handedOut, least recently first), those whose
// object st holds alive (Live) or holding no object now (Dead). An
// unregister's Live ref chooses among the objects with a record, if any:
// unregistering an object with none is a misuse, and Dead refs make
// enough. When there are none to choose from, a Dead ref falls back to the
// live objects and a Live ref to NULL. Choose makes *r canonical: the same
// choice with the smallest index, which lets the shrinker simplify indices
// by counting down. Every harness resolves refs by it: package properties
// against impl's runtime, Resolve for the calls of another process.
func Choose(op traces.Op, r *Ref, handedOut []traces.Addr, st *traces.State) traces.Addr {
	var c Chooser
	return c.Choose(op, r, handedOut, st)
}

// A Chooser chooses as Choose does, keeping its lists of the live and the
// dead from call to call: a run that resolves every call's refs (a fuzz
// body's) allocates them once, not at each call.
type Chooser struct{ live, dead []traces.Addr }

// Choose is the package's Choose, with c's lists.
func (c *Chooser) Choose(op traces.Op, r *Ref, handedOut []traces.Addr, st *traces.State) traces.Addr {
	if r.Pick == Null {
		return 0
	}
	live, dead := c.live[:0], c.dead[:0]
	defer func() { c.live, c.dead = live, dead }()
	for _, a := range handedOut {
		if _, ok := st.Objects[a]; ok {
			live = append(live, a)
		} else {
			dead = append(dead, a)
		}
	}
	// Moduli in int: a program of package drive's may have 256 objects or
	// more, and a byte's 256 is 0.
	if r.Pick == Dead && len(dead) > 0 {
		r.Index = uint8(int(r.Index) % len(dead))
		return dead[r.Index]
	}
	if op == traces.OpUnregister {
		if recorded := recorded(live, st); len(recorded) > 0 {
			live = recorded
		}
	}
	if len(live) == 0 {
		*r = Ref{Pick: Null}
		return 0
	}
	*r = Ref{Pick: Live, Index: uint8(int(r.Index) % len(live))}
	return live[r.Index]
}

// recorded returns the addresses of live that have a record in an open
// scope of st, in the same order.
func recorded(live []traces.Addr, st *traces.State) []traces.Addr {
	var out []traces.Addr
	for _, a := range live {
		for _, scope := range st.Scopes {
			if slices.Contains(scope, a) {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

// Made is one call of a resolved program: the step as made (its refs
// canonical, as Choose leaves them) and the event a correct runtime
// records for it.
type Made struct {
	Step  Step
	Event traces.Event
}

// Resolve makes p's calls as a correct runtime would be asked to make
// them, without running one: the model alone decides what is alive after
// each call, and the runtime's answers are what the contract says a
// correct runtime answers. It returns a Made for each step, in order, then
// for the teardown a well-behaved caller makes (frames exited, then
// scopes, then the params still held released in name order) and end.
// Package drive sends these calls to a runtime in another process, whose
// own answers are then judged.
//
// What a correct runtime answers, as Resolve has it: an alloc or a
// struct_init of a size other than 0 makes an object at an address never
// handed out before (with no scope open too: the object is made, and the
// call refused), and one of size 0 is NULL; an arena_get in a frame, of a
// declared variable and a size other than 0, hands out a buffer at a new
// address, and otherwise NULL. Frames are planned by PlanFrame. Addresses
// are never reused, so a Dead ref chooses among every dead object, each
// its own address.
func Resolve(p Program) []Made {
	r := resolver{chk: checker(), next: firstAddr}
	defer checkers.Put(r.chk)
	r.chk.StateInto(&r.state)
	out := make([]Made, 0, len(p.Steps)+8)
	for _, st := range p.Steps {
		out = append(out, r.make(st))
	}
	for range r.frames.Depth() {
		out = append(out, r.make(Step{Op: traces.OpFnExit}))
	}
	for range len(r.state.Scopes) {
		out = append(out, r.make(Step{Op: traces.OpScopeExit}))
	}
	for _, n := range slices.Sorted(maps.Keys(r.state.Params)) {
		out = append(out, r.make(Step{Op: traces.OpParamRelease, Name: n}))
	}
	return append(out, r.make(Step{Op: traces.OpEnd}))
}

// firstAddr is where Resolve's addresses start; each lies past the end
// of the one before, 16-byte aligned, so that no two things overlap.
const firstAddr traces.Addr = 0x1000

// header is the header of the trace Resolve's model reads: no effects,
// so that the model frees what dies itself.
var header = traces.Header{Format: traces.FormatName, Version: traces.Version}

// checkers holds the model Checkers of Resolves that are over: a new
// one's tables cost more than resolving a short program.
var checkers sync.Pool

// checker returns a Checker ready for a trace with header.
func checker() *model.Checker {
	if c, ok := checkers.Get().(*model.Checker); ok {
		c.Reset(header)
		return c
	}
	return model.New(header)
}

// resolver is one Resolve: the model, what it holds alive, the addresses
// handed out and the program's frames.
type resolver struct {
	chk    *model.Checker
	state  traces.State
	addrs  []traces.Addr // handed out, oldest first; never reused
	next   traces.Addr
	frames Frames
	events int
}

// make resolves step st, feeds its event to the model and returns both.
func (r *resolver) make(st Step) Made {
	c := CallOf(st.Op)
	st.Fields = slices.Clone(st.Fields) // resolved in place
	ev := traces.Event{Op: st.Op}
	if c != nil {
		for _, o := range c.operands {
			r.resolve(o, &st, &ev)
		}
	}
	switch st.Op {
	case traces.OpAlloc, traces.OpStructInit:
		if ev.Size != 0 {
			ev.Addr = r.handOut(ev.Size)
			r.addrs = append(r.addrs, ev.Addr)
		}
	case traces.OpFnEnter:
		slots, size := PlanFrame(st.Lives)
		ev.Slots = size
		r.frames.Enter(st.Lives, slots, size)
	case traces.OpFnExit:
		r.frames.Exit()
	case traces.OpArenaGet:
		r.frames.ArenaSlot(&ev)
		if n := len(r.frames.stack); n > 0 && ev.Slot < r.frames.stack[n-1].size && ev.Size != 0 {
			ev.Addr = r.handOut(ev.Size)
		}
		r.frames.ArenaGot(&ev, nil)
	}
	// The model's verdicts are not Resolve's to judge (a program of misuse
	// has them by design), nor an event it cannot take: only what it then
	// holds alive.
	fed := ev
	fed.Fields = slices.Clone(ev.Fields)
	_, _ = r.chk.Step(&fed, traces.Pos{Event: r.events, Line: r.events + 2})
	r.events++
	r.chk.StateInto(&r.state)
	return Made{Step: st, Event: ev}
}

// resolve sets operand o of st in ev, turning refs into addresses.
func (r *resolver) resolve(o Operand, st *Step, ev *traces.Event) {
	switch o {
	case OperandSize:
		ev.Size = st.Size
	case OperandFields:
		ev.Fields = make([]traces.Addr, len(st.Fields))
		for i := range st.Fields {
			ev.Fields[i] = Choose(st.Op, &st.Fields[i], r.addrs, &r.state)
		}
	case OperandTarget:
		ev.Addr = Choose(st.Op, &st.Target, r.addrs, &r.state)
	case OperandName, OperandHeldName:
		ev.Name = st.Name
	case OperandVar:
		r.frames.ResolveVar(st, ev)
	}
	// OperandKind and OperandLives: the call itself (make) uses them.
}

// handOut returns a new address for size bytes.
func (r *resolver) handOut(size uint64) traces.Addr {
	a := r.next
	r.next += traces.Addr((size + 31) / 16 * 16) // a gap of 16 bytes at least
	return a
}
