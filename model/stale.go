package model

import (
	"github.com/tlcheck/tlcheck/internal/plural"
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// Stale records that met a new owner. A scope exit skips a record of a
// dead object; but a runtime that finds its records' objects by address
// releases, through such a record, whatever lives at the address now,
// and the new owner's count drops by one for no reason of its own. The
// model cannot see that release; it sees its consequence, a free (with
// effects) or a stated count (the count field) that comes short, perhaps
// many events later. So it remembers, on the new owner, the stale records
// that were skipped at its address while it lived, and names them when
// the consequence comes.

// staleHit is the stale records a scope exit skipped at an object's
// address while the object lived there: the first one, and how many.
type staleHit struct {
	exit    hist // the scope_exit that skipped the first
	made    hist // where the first was made
	old     int  // the first's dead object
	oldDied hist // where that object died
	n       int  // records skipped at the address in the object's life
}

// noteStale remembers on the live object at r's address, if any, that a
// scope exit skipped r, a record of the dead object that lived there.
func (c *Checker) noteStale(r record) {
	o := c.liveObjectAt(r.t.addr())
	if o == nil || o == r.t {
		return
	}
	x := o.ext()
	if x.stale == nil {
		x.stale = &staleHit{exit: c.here, made: r.made, old: r.t.id(), oldDied: r.t.diedAt()}
	}
	x.stale.n++
}

// explains reports whether the stale records h counts account for a
// count of n that the runtime took to 0 (or says it has): one release
// through each record.
func (h *staleHit) explains(n int) bool {
	return h != nil && n > 0 && n <= h.n
}

// phrase is ": the scope exit at E skipped a stale record (made at M) of
// object #O, which died at D, at the same address".
func (h *staleHit) phrase() string {
	s := ": the scope exit at " + h.exit.at() + " skipped a stale record (made at " + h.made.at() +
		") of object #" + strconv.Itoa(h.old) + " at the same address, which died at " + h.oldDied.at()
	if h.n > 1 {
		s += ", and " + plural.Count(h.n-1, "other stale record") + " met this object there"
	}
	return s + "; a runtime that released through the address released this object instead"
}

// related lists the first stale record's events.
func (h *staleHit) related(rel []traces.Related) []traces.Related {
	return append(rel, h.made.related("stale record made"), h.oldDied.related("its object died"),
		h.exit.related("stale record skipped"))
}
