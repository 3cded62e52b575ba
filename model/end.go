package model

import (
	"github.com/tlcheck/tlcheck/internal/plural"
	"slices"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/traces"
)

// maxOpenRelated bounds the open scopes or frames an end misuse lists.
const maxOpenRelated = 8

// end runs the leak check: first a misuse for scopes and frames left open,
// then a leak for each live thing that nothing still holds, in the order
// made. Every live thing is counted as leaked or as still reachable. Only
// the first end checks; the trace counts as complete from then on.
func (c *Checker) end(op traces.Op) {
	if c.ended {
		return
	}
	c.ended, c.endAt = true, c.here
	c.leaked = c.missed // objects whose count reached 0 but never freed
	if n := len(c.scopes); n > 0 {
		rel := make([]traces.Related, 0, min(n, maxOpenRelated))
		for _, s := range c.scopes[:min(n, maxOpenRelated)] {
			rel = append(rel, s.enter.related("scope entered"))
		}
		c.misuse(op, 0, nil, plural.Count(n, "scope")+" still open at end (the outermost entered at "+c.scopes[0].enter.at()+")", rel...)
	}
	if n := len(c.frames); n > 0 {
		rel := make([]traces.Related, 0, min(n, maxOpenRelated))
		for _, f := range c.frames[:min(n, maxOpenRelated)] {
			rel = append(rel, f.enter.related("frame entered"))
		}
		c.misuse(op, 0, nil, plural.Count(n, "function frame")+" still open at end (the outermost entered at "+c.frames[0].enter.at()+")", rel...)
	}
	c.markHeld()
	for _, t := range c.liveThings() {
		if c.held(t) {
			c.reachable.Objects++
			c.reachable.Bytes += t.Size
			continue
		}
		c.leaked.Objects++
		c.leaked.Bytes += t.Size
		c.report(traces.Leak, t.addr(), t, leakMessage(t), t.madeAt().related("allocated"))
	}
}

// afterEnd is what a premature free adds when it comes after the end: a
// runtime's teardown that frees what it still held once the run is over
// (the objects end found leaked or still reachable). The contract's end is
// the run's last event, so the free is premature all the same; the hint
// says where to look.
func (c *Checker) afterEnd() string {
	if !c.ended {
		return ""
	}
	return "; it comes after the end of the run at " + c.endAt.at() +
		" (a teardown's frees belong before end, each after the release that makes it due, or out of the trace)"
}

// held reports whether a thing live at end is still held (see atEnd):
// by design, or because markHeld reached it.
func (c *Checker) held(t *thing) bool {
	switch t.kind().row().atEnd {
	case heldIfReached:
		return t.x.mark == c.epoch
	case held:
		return true
	}
	return false
}

// leakMessage says why t, live at end and not held, is a leak; "%refs"
// in the kind's leak message stands for its count of references.
func leakMessage(t *thing) string {
	msg := t.kind().row().leak
	if t.x != nil {
		msg = strings.ReplaceAll(msg, "%refs", plural.Count(t.x.count, "reference"))
	}
	msg = t.String() + " " + msg
	if t.x != nil && t.x.snap != nil {
		sn := t.x.snap
		msg += "; it is a snapshot of saved tensor " + strconv.Quote(sn.name) + "'s storage at version " +
			strconv.Itoa(sn.version) + ", taken at " + sn.made.at() + ", which was never released with its graph"
	}
	return msg
}

// liveThings returns the live (and due) things in the order made.
func (c *Checker) liveThings() []*thing {
	ts := make([]*thing, 0, c.nlive)
	ts = c.mem.live(ts)
	slices.SortFunc(ts, func(a, b *thing) int { return a.id() - b.id() })
	return ts
}

// markHeld marks the live objects that params and open scopes' records
// reach, directly or through struct fields.
func (c *Checker) markHeld() {
	c.epoch++
	c.work = c.work[:0]
	push := func(t *thing) {
		if t.state() == live && t.x.mark != c.epoch {
			t.x.mark = c.epoch
			c.work = append(c.work, t)
		}
	}
	for _, p := range c.params {
		push(p.t)
	}
	for _, s := range c.scopes {
		for _, r := range s.recs {
			push(r.t)
		}
	}
	for len(c.work) > 0 {
		t := c.work[len(c.work)-1]
		c.work = c.work[:len(c.work)-1]
		if t.x != nil {
			for _, f := range t.x.fields {
				push(f)
			}
		}
	}
}

// State returns the observable layer-2 state: live objects and their
// counts, the scope records of live objects (bottom scope first, oldest
// record first) and the params. Maps and slices are never nil. Where two
// live objects share an address (after an overlap), the newer one shows.
func (c *Checker) State() traces.State {
	var st traces.State
	c.StateInto(&st)
	return st
}

// StateInto writes what State returns into st, reusing its maps and
// slices: for a caller that compares the state after every event and
// keeps none of them (a property test's thousands of short runs). What st
// held before is overwritten.
func (c *Checker) StateInto(st *traces.State) {
	if st.Objects == nil {
		st.Objects = make(map[traces.Addr]int)
	}
	if st.Params == nil {
		st.Params = make(map[string]traces.Addr, len(c.params))
	}
	clear(st.Objects)
	clear(st.Params)
	scopes := st.Scopes[:0]
	if scopes == nil {
		scopes = make([][]traces.Addr, 0, len(c.scopes))
	}
	objs := c.mem.objects(c.stateBuf[:0])
	n := 0
	for _, t := range objs {
		if t.state() == live {
			st.Objects[t.addr()] = t.x.count
			n++
		}
	}
	if n != len(st.Objects) {
		// Live objects sharing an address (after an overlap): the newer
		// wins. Only then are they sorted, which cost a property test a
		// tenth of its time when done after every call.
		clear(st.Objects)
		objs = slices.DeleteFunc(objs, func(t *thing) bool { return t.state() != live })
		slices.SortFunc(objs, func(a, b *thing) int { return a.id() - b.id() })
		for _, t := range objs {
			st.Objects[t.addr()] = t.x.count
		}
	}
	clear(objs)
	c.stateBuf = objs[:0]
	for i, s := range c.scopes {
		var recs []traces.Addr
		if i < cap(scopes) {
			recs = scopes[:i+1][i][:0] // the slice this scope had last time
		}
		if recs == nil {
			recs = make([]traces.Addr, 0, len(s.recs))
		}
		for _, r := range s.recs {
			if r.t.state() == live {
				recs = append(recs, r.t.addr())
			}
		}
		scopes = append(scopes, recs)
	}
	st.Scopes = scopes
	for name, p := range c.params {
		st.Params[name] = p.t.addr()
	}
}
