package drive

import (
	"github.com/tlcheck/tlcheck/properties"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// Lower turns a generated program into the calls the protocol sends, for
// a driver that takes the calls in offers (nil: every call). Steps of other
// calls are dropped first (any subsequence of a program is a program).
// The program names objects by position among those alive (flat.Ref);
// the protocol names them by handle. Lower resolves the positions by running
// the program against package impl's Runtime, without faults, with the
// model (properties.Resolve): a correct runtime is alive exactly where that one
// is, and a driver whose runtime is not gets the same calls, as a program's
// code would make them whatever its runtime did. The calls end with the
// teardown a well-behaved caller makes (frames and scopes exited, params
// released) and end. Lower also returns the program as run: its refs
// canonical, as flat.ShrinkWith wants it.
func Lower(p flat.Program, offers map[traces.Op]bool) (flat.Program, []Call) {
	if offers != nil {
		p = filter(p, offers)
	}
	r := properties.Resolve(p)
	made := flat.Program{Steps: make([]flat.Step, len(p.Steps))}
	handles := map[traces.Addr]int{} // the newest handle given to each address
	calls := make([]Call, 0, len(r.Calls))
	handleOf := func(a traces.Addr) int {
		if a == 0 {
			return 0
		}
		return handles[a]
	}
	next := 1
	for i, c := range r.Calls {
		if i < len(made.Steps) {
			made.Steps[i] = c.Step
		}
		var ev traces.Event
		if c.Event >= 0 {
			ev = r.Trace[c.Event]
		}
		call := Call{Op: c.Step.Op}
		f := callRows[call.Op].fields
		if f&cTarget != 0 {
			call.Target = handleOf(ev.Addr)
		}
		if f&cSize != 0 {
			call.Size = ev.Size
		}
		if f&cName != 0 {
			call.Name = c.Step.Name
		}
		if f&cFields != 0 {
			call.Fields = make([]int, len(ev.Fields))
			for k, a := range ev.Fields {
				call.Fields[k] = handleOf(a)
			}
		}
		call.Slots, call.Slot, call.Var = ev.Slots, ev.Slot, ev.Var
		if f&cHandle != 0 { // after the fields: a struct may reuse a dead field's address
			call.Handle = next
			next++
			if ev.Addr != 0 {
				handles[ev.Addr] = call.Handle
			}
		}
		calls = append(calls, call)
	}
	return made, calls
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
