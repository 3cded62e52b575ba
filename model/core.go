package model

import (
	"strconv"

	"github.com/tlcheck/tlcheck/model/internal/index"
	"github.com/tlcheck/tlcheck/traces"
)

// span returns the range an allocation of size bytes at a owns,
// [a, a+max(size,1)), clamped at the top of the space.
func span(a traces.Addr, size uint64) (lo, hi uint64) { return index.Span(uint64(a), size) }

// things is the model's index of things by address (package index: the
// tuned one, or with the build tag naiveindex the naive one).
type things = index.Index[thing, *thing]

// hit is a thing an index's range query found.
type hit = index.Hit[thing]

// make records a new thing of kind k at a, made by op, the current event.
// It reports an overlap with live things of the same class, and forgets
// dead things whose range the new one takes. It returns nil only for a
// malloc or realloc at the start of a live block: that allocation is
// reported and otherwise ignored, so the block keeps its size and site, as
// glibc's mtrace script does.
func (c *Checker) make(op traces.Op, k kind, a traces.Addr, size uint64) *thing {
	sp := k.row().space.index()
	lo, hi := span(a, size)
	t := c.idx.TryReuse(sp, index.Kind(k), lo, hi, size)
	var met []*thing // the live things of k's class the new range meets
	if t == nil {
		found := c.idx.Overlapping(sp, lo, hi, c.found[:0])
		met = c.liveOfClass(found, k, c.met[:0])
		if b := blockAt(k, lo, met); b != nil {
			c.report(traces.Overlap, traces.Addr(lo), b, op.String()+" of "+strconv.FormatUint(size, 10)+
				" bytes at "+traces.Addr(lo).String()+", where "+b.String()+" is still allocated; the block keeps its size and site",
				b.madeAt().related("allocated"))
		} else {
			t = c.idx.Place(sp, index.Kind(k), lo, hi, size, found)
		}
		clear(found) // keep the buffer, holding nothing alive
		c.found = found[:0]
	}
	if t == nil {
		clear(met)
		c.met = met[:0]
		return nil
	}
	// Number the new thing and count it live.
	c.made++
	t.setID(c.made)
	t.made, t.madeWhere = c.here.event, c.hereWhere()
	c.nlive++
	if k.counted() {
		c.liveBytes += size
		c.peak = max(c.peak, c.liveBytes)
	}
	if c.watch != nil {
		c.born = t // told of once the event is done with it
	}
	if len(met) > 0 {
		c.reportOverlap(op, t, met)
		clear(met)
		c.met = met[:0]
	}
	return t
}

// liveOfClass appends to out the live things among found of k's overlap
// class, and returns out.
func (c *Checker) liveOfClass(found []hit, k kind, out []*thing) []*thing {
	for i := range found {
		if h := &found[i]; !h.Dead && kind(h.Kind).row().class == k.row().class {
			out = append(out, h.Thing)
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
		msg += " and " + plural(n, "more")
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
	if row := t.kind().row(); row.keep == lean { // the index reads other kinds' deaths from the thing
		c.idx.Died(row.space.index(), t)
	}
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

// freeLiveBlock is a free's fast path: where the index can tell from its
// entries alone that a live block starts at a, it records the block's
// death and says its size, so the block is only written to, and
// freeLiveBlock does the rest of kill and reports true. Else it returns
// the block or object that starts at a (see lookup), and false.
func (c *Checker) freeLiveBlock(a traces.Addr) (*thing, bool) {
	t, size, killed := c.idx.KillLiveAt(heapSpace.index(), uint64(a), index.Kind(kBlock), freeable)
	if !killed {
		return t, false
	}
	t.Died, t.diedWhere = c.here.event+1, c.hereWhere()
	c.nlive--
	c.liveBytes -= size
	if c.watch != nil {
		c.watchDied(t, c.here.event)
	}
	return nil, true
}

// lookup resolves the address op names to the live thing of a kind in mask
// that starts there. It returns nil (having reported why) when there is
// none, and nil without a report for NULL, which names nothing.
func (c *Checker) lookup(op traces.Op, a traces.Addr, mask kindMask) *thing {
	if a == 0 {
		return nil
	}
	t := c.idx.StartingAt(spaceOf(mask).index(), uint64(a), mask)
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
