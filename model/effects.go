package model

import (
	"github.com/tlcheck/tlcheck/internal/plural"
	"slices"
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// Effects: the runtime writes a free for every object it really frees,
// right after the call that caused it. Objects whose count reached 0 in a
// call are due; the frees that follow must free exactly them.

// settle runs before every event other than a free: a due object that was
// not freed is a leak named after the call that made it due, and is dead
// from then on, but a free of it that comes late is still its free (see
// freeObject). The last call's stale records expire.
func (c *Checker) settle() {
	if len(c.stale) > 0 || len(c.due) > 0 { // mostly neither: this part is inlined
		c.settleSome()
	}
}

func (c *Checker) settleSome() {
	clear(c.stale)
	c.stale = c.stale[:0]
	if len(c.due) == 0 {
		return
	}
	// Leaks come in the order the objects were made.
	slices.SortFunc(c.due, func(a, b *thing) int { return a.id() - b.id() })
	for _, t := range c.due {
		if t.state() != due {
			continue // freed
		}
		z := t.x.zero
		c.emit(traces.Violation{
			Kind:   traces.Leak,
			Event:  z.event,
			Line:   z.line,
			Site:   z.site,
			Addr:   t.addr(),
			Object: t.id(),
			Message: "the runtime did not free " + t.String() + " after the call at " + z.at() +
				", which took its count to 0; the next call came first",
			Related: t.history(nil),
		}, t)
		c.missed.Objects++
		c.missed.Bytes += t.Size
		t.x.missed = true
		if c.watch != nil {
			c.watchMissed(t)
		}
		c.kill(t, z) // it died with that call, as far as the model knows
	}
	clear(c.due)
	c.due = c.due[:0]
}

// freeObject handles a free (op: free, or realloc's free half) (effects only) of a managed object: expected
// when the object is due or was reported as a missed free, premature while it still has references, and
// stale-reuse when the call before was a scope exit that skipped a stale
// record of a dead object at the same address (the runtime acted on that
// record through the address, and so on the address's new owner), or when
// stale records an earlier scope exit skipped at its address account for
// the references it still has (stale.go). A premature free after end says
// so (afterEnd).
func (c *Checker) freeObject(op traces.Op, t *thing) {
	switch {
	case t.state() == due:
		c.kill(t, c.here)
		return
	case t.state() == dead && t.x.missed:
		// A late free: the leak was reported at the call that made the
		// free due; this is the object's one free, not a second one, and
		// the object no longer counts as leaked.
		t.x.missed = false
		c.missed.Objects--
		c.missed.Bytes -= t.Size
		if c.watch != nil {
			c.watchFreedLate(t)
		}
		return
	case t.state() == dead:
		c.reportNotLive(op, t)
		return
	}
	if r := c.staleAt(t.Lo); r != nil {
		old := r.t
		rel := append(t.history(nil), r.made.related("stale record made"))
		rel = append(rel, old.diedAt().related(old.kind().row().diedWhat))
		c.report(traces.StaleReuse, t.addr(), t, op.String()+" of "+t.String()+
			", which still has "+plural.Count(t.x.count, "reference")+": the scope exit at "+c.call.at()+
			" held a stale record (made at "+r.made.at()+") of object #"+strconv.Itoa(old.id())+
			" at the same address"+old.deathPhrase(), rel...)
	} else if h := t.x.stale; h.explains(t.x.count) {
		c.report(traces.StaleReuse, t.addr(), t, op.String()+" of "+t.String()+
			", which still has "+plural.Count(t.x.count, "reference")+h.phrase(), h.related(t.history(nil))...)
	} else {
		c.report(traces.PrematureFree, t.addr(), t, op.String()+" of "+t.String()+
			", which still has "+plural.Count(t.x.count, "reference")+c.afterEnd(), c.holders(t, t.history(nil))...)
	}
	// Take the runtime's word: the object is dead, and a struct releases
	// its fields as a dying struct does.
	t.x.count = 0
	c.zero(op, t)
	c.kill(t, c.here)
}

// maxHolders bounds the holders a premature free lists.
const maxHolders = 4

// holders appends to rel where the references that keep t alive were
// taken, as far as the model keeps them: params holding t (by name) and
// scope records of t (innermost first).
func (c *Checker) holders(t *thing, rel []traces.Related) []traces.Related {
	n := 0
	names := make([]string, 0, len(c.params))
	for name, p := range c.params {
		if p.t == t {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names[:min(len(names), maxHolders)] {
		rel = append(rel, c.params[name].made.related("parameter "+strconv.Quote(name)+" registered"))
		n++
	}
	for i := len(c.scopes) - 1; i >= 0 && n < maxHolders; i-- {
		for _, r := range c.scopes[i].recs {
			if r.t == t && n < maxHolders {
				rel = append(rel, r.made.related("scope record made"))
				n++
			}
		}
	}
	return rel
}

// staleAt returns a stale record the last call skipped whose object lived
// at address a, or nil.
func (c *Checker) staleAt(a uint64) *record {
	if c.callOp != traces.OpScopeExit {
		return nil
	}
	for i := range c.stale {
		if c.stale[i].t.Lo == a {
			return &c.stale[i]
		}
	}
	return nil
}

// abandon drops what settle would check when the trace stops: a due free
// that has not come by the end of the file is no leak, since the run may
// have been cut off between the call and its frees.
func (c *Checker) abandon() {
	clear(c.stale)
	c.stale = c.stale[:0]
	clear(c.due)
	c.due = c.due[:0]
}
