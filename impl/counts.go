package impl

import "github.com/tlcheck/tlcheck/traces"

// Counts in the trace. Every layer-2 call that names one object records
// that object's count after the call as the runtime's books have it (the
// event's count field), so that the model catches a count that drifts at
// the call where it drifts, even when no free ever shows it. The count is
// known only once the call is done, but the call's event must come before
// the frees it causes; so a counted call's event is held back while the
// call runs, what the call records meanwhile queues behind it, and both go
// to the recorder when the call returns. Without a recorder none of this
// runs.

// kept returns count as the runtime keeps it: in a byte, wrapping at 256,
// under FaultU8Count.
func (r *Runtime) kept(count int) int {
	if r.HasFault(FaultU8Count) {
		return count & 0xff
	}
	return count
}

// heldCall is a counted call's event while the call runs.
type heldCall struct {
	on    bool
	ev    traces.Event
	of    ref            // the object whose count ev states
	queue []traces.Event // what the call recorded meanwhile: its frees
}

// hold holds back ev, the event of a call whose count is that of the live
// object at a (none for NULL or no live object: the call is an error, and
// states no count). finish sends it.
func (r *Runtime) hold(ev traces.Event, a traces.Addr) {
	if r.record == nil {
		return
	}
	r.call.on, r.call.ev, r.call.of = true, ev, ref{}
	if b := r.heap.lookup(a); a != 0 && b != nil && b.live {
		r.call.of = ref{a, b.gen}
	}
}

// holdRef is hold for a call on the object ref names (param_release).
func (r *Runtime) holdRef(ev traces.Event, of ref) {
	r.hold(ev, of.addr)
	if r.call.of.gen != of.gen {
		r.call.of = ref{}
	}
}

// finish records the held event, with the count its object has now, then
// what queued behind it.
func (r *Runtime) finish() {
	if !r.call.on {
		return
	}
	c := &r.call
	c.on = false
	if b := r.heap.lookup(c.of.addr); c.of.addr != 0 && b != nil && b.gen == c.of.gen && b.count >= 0 {
		c.ev.Count, c.ev.HasCount = uint64(b.count), true
	}
	r.record(c.ev)
	for i := range c.queue {
		r.record(c.queue[i])
	}
	clear(c.queue)
	c.queue = c.queue[:0]
}
