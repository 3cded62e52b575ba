package model

import (
	"github.com/tlcheck/tlcheck/internal/plural"
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// make records a new thing of kind k at a, made by op, the current event.
// It reports an overlap with live things of the same class, and forgets
// dead things whose range the new one takes. It returns nil only for a
// malloc or realloc at the start of a live block: that allocation is
// reported and otherwise ignored, so the block keeps its size and site, as
// glibc's mtrace script does.
func (c *Checker) make(op traces.Op, k kind, a traces.Addr, size uint64) *thing {
	lo, hi := span(a, size)
	if t := c.mem.reuse(k, lo, hi, size); t != nil {
		c.count(t) // a dead thing's range, meeting nothing live
		return t
	}
	met := c.mem.meeting(k, lo, hi)
	if b := blockAt(k, lo, met); b != nil {
		c.report(traces.Overlap, traces.Addr(lo), b, op.String()+" of "+strconv.FormatUint(size, 10)+
			" bytes at "+traces.Addr(lo).String()+", where "+b.String()+" is still allocated; the block keeps its size and site",
			b.madeAt().related("allocated"))
		return nil
	}
	t := c.mem.place(k, lo, hi, size)
	c.count(t)
	if len(met) > 0 {
		c.reportOverlap(op, t, met)
	}
	return t
}

// count numbers the new thing t, made by the current event, and counts
// it live.
func (c *Checker) count(t *thing) {
	c.made++
	t.setID(c.made)
	t.made, t.madeWhere = c.here.event, c.hereWhere()
	c.nlive++
	if t.kind().counted() {
		c.liveBytes += t.Size
		c.peak = max(c.peak, c.liveBytes)
	}
	if c.watch != nil {
		c.born = t // told of once the event is done with it
	}
}

// blockAt returns, for a new block at lo, the live block among met that
// starts there: the allocation is then ignored. It returns nil for other
// kinds.
func blockAt(k kind, lo uint64, met []*thing) *thing {
	if k != kBlock {
		return nil
	}
	for _, o := range met {
		if o.kind() == kBlock && o.Lo == lo {
			return o
		}
	}
	return nil
}

// reportOverlap reports that new thing t, made by op, meets the live
// things met.
func (c *Checker) reportOverlap(op traces.Op, t *thing, met []*thing) {
	o := met[0]
	msg := op.String() + " of " + t.String() + " overlaps live " + o.String()
	if n := len(met) - 1; n > 0 {
		msg += " and " + plural.Count(n, "more")
	}
	rel := make([]traces.Related, 0, min(len(met), 4))
	for _, o := range met[:min(len(met), 4)] {
		rel = append(rel, o.madeAt().related("allocated"))
	}
	c.report(traces.Overlap, t.addr(), t, msg, rel...)
}

// kill ends t's life at event at. It stays in the index, and is
// remembered there until a new allocation takes its range.
func (c *Checker) kill(t *thing, at hist) {
	if t.state() == dead {
		return
	}
	w := c.hereWhere() // kills are mostly at the current event: its record is at hand
	if at != c.here {
		w = c.wheres.of(at)
	}
	t.Died, t.diedWhere = at.event+1, w
	if c.watch != nil {
		c.watchDied(t, at.event)
	}
	c.mem.died(t)
	c.nlive--
	if t.kind().counted() {
		c.liveBytes -= t.Size
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

// lookup resolves the address op names to the live thing that starts
// there, of a kind its row in the op table names (traces.Op.Names; see
// opMasks). It returns nil (having reported why) when there is none, and
// nil without a report for NULL, which names nothing.
func (c *Checker) lookup(op traces.Op, a traces.Addr) *thing {
	return c.resolve(op, a, opMasks[op])
}

// resolve is lookup for a thing of a kind in mask: struct_init's fields,
// which its row does not describe (its addr makes the struct).
func (c *Checker) resolve(op traces.Op, a traces.Addr, mask kindMask) *thing {
	if a == 0 {
		return nil
	}
	t := c.mem.at(a, mask)
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
