package model

import (
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// Counts: a layer-2 op may carry the object's reference count after the op
// as the runtime believes it (the event's count field). A count that
// drifts from the model's without changing a free in that run (a withheld
// release on an object a parameter keeps to the end, a count kept in a
// byte that wraps) leaves a trace that is otherwise correct; the count
// field lets the model catch it at the event where it drifts.

// countTarget returns the object whose count ev states, as it stands
// before the op: the live object the op names, or nil where the op makes
// it (alloc, struct_init: see counted) or names no live object (NULL, or
// a violation the op's own rule reports; its count is then not checked).
func (c *Checker) countTarget(ev *traces.Event) *thing {
	switch ev.Op {
	case traces.OpAlloc, traces.OpStructInit:
		return nil
	case traces.OpParamRelease:
		if p, ok := c.params[ev.Name]; ok && p.t.state() == live {
			return p.t
		}
		return nil
	}
	return c.liveObjectAt(ev.Addr)
}

// liveObjectAt returns the live object that starts at a, or nil.
func (c *Checker) liveObjectAt(a traces.Addr) *thing {
	if a == 0 {
		return nil
	}
	t := c.mem.at(a, kObject.mask())
	if t == nil || t.state() != live {
		return nil
	}
	return t
}

// checkCount holds ev's count to the model's count of t (countTarget's,
// or the object the op made) after the op. A drift, the runtime's count
// minus the model's, is reported when it first appears on an object and
// again only when it changes to another drift, so that one withheld
// release is one violation however many later events state the count.
func (c *Checker) checkCount(ev *traces.Event, t *thing) {
	if t == nil && (ev.Op == traces.OpAlloc || ev.Op == traces.OpStructInit) {
		if t = c.liveObjectAt(ev.Addr); t != nil && t.made != c.pos.Event {
			t = nil // the op made no object (an overlap it was ignored for)
		}
	}
	if t == nil {
		return
	}
	x := t.ext()
	drift := int64(ev.Count) - int64(x.count)
	if ev.Count > 1<<62 {
		drift = 1 << 62 // a count no runtime holds: a drift, whatever it is
	}
	if drift == x.drift {
		return
	}
	x.drift = drift
	if drift == 0 {
		return // back in step: nothing wrong here
	}
	msg := ev.Op.String() + " of " + t.String() + ": the runtime says its count is now " +
		strconv.FormatUint(ev.Count, 10) + "; the model's is " + strconv.Itoa(x.count)
	if t.state() != live {
		msg += " (it died here)"
	}
	rel := t.history(nil)
	if h := x.stale; drift < 0 && h.explains(int(-drift)) {
		msg += h.phrase()
		rel = h.related(rel)
	}
	if t.state() == live {
		rel = c.holders(t, rel)
	}
	c.report(traces.CountMismatch, t.addr(), t, msg, rel...)
}
