package model

import (
	"math"
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// span returns the range an allocation of size bytes at a owns,
// [a, a+max(size,1)), clamped at the top of the space.
func span(a traces.Addr, size uint64) (lo, hi uint64) {
	lo = uint64(a)
	hi = lo + max(size, 1)
	if hi < lo {
		hi = math.MaxUint64
	}
	return lo, hi
}

// shadowOf returns the shadow of address space s.
func (c *Checker) shadowOf(s space) *shadow {
	if s == deviceSpace {
		return &c.dev
	}
	return &c.heap
}

// make records a new thing of kind k at a, made by op, the current event.
// It reports an overlap with live things of the same class, and forgets
// dead things whose range the new one takes. It returns nil only for a
// malloc or realloc at the start of a live block: that allocation is
// reported and otherwise ignored, so the block keeps its size and site, as
// glibc's mtrace script does.
func (c *Checker) make(op traces.Op, k kind, a traces.Addr, size uint64) *thing {
	sp := c.shadowOf(k.row().space)
	lo, hi := span(a, size)
	if t := c.reuse(sp, k, lo, hi, size); t != nil {
		c.born(t, size)
		return t
	}
	found := sp.overlapping(lo, hi, c.found[:0])
	met := c.liveOfClass(found, k, c.met[:0])
	var t *thing
	if b := blockAt(k, lo, met); b != nil {
		c.report(traces.Overlap, traces.Addr(lo), b, op.String()+" of "+strconv.FormatUint(size, 10)+
			" bytes at "+traces.Addr(lo).String()+", where "+b.String()+" is still allocated; the block keeps its size and site",
			b.madeAt().related("allocated"))
	} else {
		t = c.place(sp, k, lo, hi, size, found)
		c.born(t, size)
		if len(met) > 0 {
			c.reportOverlap(op, t, met)
		}
	}
	// Keep the buffers for the next make, holding nothing alive.
	clear(met)
	c.found, c.met = found[:0], met[:0]
	return t
}

// born numbers t, just made at the current event, and counts it live.
func (c *Checker) born(t *thing, size uint64) {
	c.made++
	t.setID(c.made)
	t.made, t.madeWhere = c.here.event, c.hereWhere()
	c.nlive++
	if t.kind().counted() {
		c.liveBytes += size
		c.peak = max(c.peak, c.liveBytes)
	}
}

// liveOfClass appends to out the live things among found of k's overlap
// class, and returns out.
func (c *Checker) liveOfClass(found []hit, k kind, out []*thing) []*thing {
	for i := range found {
		if h := &found[i]; !h.dead && h.kind.row().class == k.row().class {
			out = append(out, c.store.at(h.ref))
		}
	}
	return out
}

// blockAt returns, for a new block at lo, the live block among met that
// starts there: the allocation is then ignored. It returns nil for other
// kinds.
func blockAt(k kind, lo uint64, met []*thing) *thing {
	if k != kBlock {
		return nil
	}
	for _, o := range met {
		if o.kind() == kBlock && o.lo == lo {
			return o
		}
	}
	return nil
}

// reuse is make's fast path (see shadow.reusable): the new thing takes
// the place of a dead one that starts where it does, in the store and in
// the shadow; a new object takes only the dead one's entries, since an
// object may be named after it is forgotten. It returns nil where it does
// not apply.
func (c *Checker) reuse(sp *shadow, k kind, lo, hi, size uint64) *thing {
	e, l := sp.reusable(k, lo, hi)
	if e == nil {
		return nil
	}
	old := e.ref()
	var t *thing
	r := old
	if k == kObject {
		t, r = c.store.add(k)
		c.store.forget(old, k)
	} else {
		t = c.store.renew(old, k)
	}
	t.lo, t.size = lo, size
	if first, last := sp.cells(l, lo, hi); first == last {
		*e = newEntry(t, r, 0)
	} else {
		sp.reshape(t, old, r, l)
	}
	return t
}

// place is make's general path: given what the new range meets (found),
// it forgets the dead things there (or takes the place of one, as reuse
// does) and enters the new thing, which it returns.
func (c *Checker) place(sp *shadow, k kind, lo, hi, size uint64, found []hit) *thing {
	var t *thing
	for i := range found {
		h := &found[i]
		switch {
		case !h.dead:
			sp.nested = true
		case t == nil && h.kind == k && k != kObject && sp.sameCells(h, lo, hi):
			t = c.store.renew(h.ref, k)
			t.lo, t.size = lo, size
			sp.reshape(t, h.ref, h.ref, h.level)
		default:
			sp.remove(h.ref, h.lo, h.hi, h.level) // its range is taken: forget it
			c.store.forget(h.ref, h.kind)
		}
	}
	if t == nil {
		var r ref
		t, r = c.store.add(k)
		t.lo, t.size = lo, size
		sp.insert(t, r)
	}
	return t
}

// reportOverlap reports that new thing t, made by op, meets the live
// things met.
func (c *Checker) reportOverlap(op traces.Op, t *thing, met []*thing) {
	o := met[0]
	msg := op.String() + " of " + t.String() + " overlaps live " + o.String()
	if n := len(met) - 1; n > 0 {
		msg += " and " + plural(n, "more")
	}
	rel := make([]traces.Related, 0, min(len(met), 4))
	for _, o := range met[:min(len(met), 4)] {
		rel = append(rel, o.madeAt().related("allocated"))
	}
	c.report(traces.Overlap, t.addr(), t, msg, rel...)
}

// kill ends t's life at event at. It stays in the shadow, and is
// remembered there until a new allocation takes its range.
func (c *Checker) kill(t *thing, at hist) {
	if t.state() == dead {
		return
	}
	if t.kind() == kBlock {
		c.heap.markDead(t)
	}
	w := c.hereWhere() // kills are mostly at the current event: its record is at hand
	if at != c.here {
		w = c.wheres.of(at)
	}
	t.died, t.diedWhere = at.event+1, w
	c.nlive--
	if t.kind().counted() {
		c.liveBytes -= t.size
	}
	if t.kind() == kPool && t.x != nil && t.x.seg != nil {
		t.x.seg.x.poolLive--
		t.x.seg = nil
	}
}

// hereWhere is the where record of the current event.
func (c *Checker) hereWhere() *where {
	if c.hereW == nil {
		c.hereW = c.wheres.of(c.here)
	}
	return c.hereW
}

// freeBlock is kill for a live block found by its first entry e at the
// current event, in the common case that needs no more: what kill reads
// of the thing, e says, so the thing is only written to.
func (c *Checker) freeBlock(e *entry) {
	e.meta |= metaDead
	t := c.store.at(e.ref())
	size := e.len()
	if e.meta&metaInexact != 0 {
		size = t.size
	}
	t.died, t.diedWhere = c.here.event+1, c.hereWhere()
	c.nlive--
	c.liveBytes -= size
}

// lookup resolves the address op names to the live thing of a kind in mask
// that starts there. It returns nil (having reported why) when there is
// none, and nil without a report for NULL, which names nothing.
func (c *Checker) lookup(op traces.Op, a traces.Addr, mask kindMask) *thing {
	if a == 0 {
		return nil
	}
	t := c.shadowOf(mask.space()).startingAt(uint64(a), mask)
	switch {
	case t == nil:
		c.nowhere(op, a, mask)
		return nil
	case t.state() != live:
		c.reportNotLive(op, t)
		return nil
	}
	return t
}
