package drive

import (
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// Lower turns a generated program into the calls the protocol sends, for
// a driver that takes the calls in offers (nil: every call). Steps of other
// calls are dropped first (any subsequence of a program is a program).
// The program names objects by position among those alive (flat.Ref);
// the protocol names them by handle. Lower resolves the positions as a
// correct runtime would be asked, with the model alone deciding what is
// alive (flat.Resolve): no runtime runs, and a driver whose runtime is not
// correct gets the same calls, as a program's code would make them
// whatever its runtime did. A dead ref names a dead object's handle, any
// of them: the addresses Lower resolves with are never reused. The calls
// end with the teardown a well-behaved caller makes (frames and scopes
// exited, params released) and end. Lower also returns the program as
// made: its refs canonical, as flat.ShrinkWith wants it.
func Lower(p flat.Program, offers map[traces.Op]bool) (flat.Program, []Call) {
	if offers != nil {
		p = filter(p, offers)
	}
	made := flat.Resolve(p)
	steps := flat.Program{Steps: make([]flat.Step, len(p.Steps))}
	handles := map[traces.Addr]int{} // the handle given to each address
	calls := make([]Call, 0, len(made))
	handleOf := func(a traces.Addr) int {
		if a == 0 {
			return 0
		}
		return handles[a]
	}
	next := 1
	for i, m := range made {
		if i < len(steps.Steps) {
			steps.Steps[i] = m.Step
		}
		ev := m.Event
		call := Call{Op: m.Step.Op}
		f := callRows[call.Op].fields
		if f&cTarget != 0 {
			call.Target = handleOf(ev.Addr)
		}
		if f&cSize != 0 {
			call.Size = ev.Size
		}
		if f&cName != 0 {
			call.Name = m.Step.Name
		}
		if f&cFields != 0 {
			call.Fields = make([]int, len(ev.Fields))
			for k, a := range ev.Fields {
				call.Fields[k] = handleOf(a)
			}
		}
		call.Slots, call.Slot, call.Var = ev.Slots, ev.Slot, ev.Var
		if f&cHandle != 0 {
			call.Handle = next
			next++
			if ev.Addr != 0 {
				handles[ev.Addr] = call.Handle
			}
		}
		calls = append(calls, call)
	}
	return steps, calls
}

// filter drops the steps whose call is not offered.
func filter(p flat.Program, offers map[traces.Op]bool) flat.Program {
	for _, s := range p.Steps {
		if !offers[s.Op] {
			out := flat.Program{Steps: make([]flat.Step, 0, len(p.Steps))}
			for _, s := range p.Steps {
				if offers[s.Op] {
					out.Steps = append(out.Steps, s)
				}
			}
			return out
		}
	}
	return p
}
