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

// spaceOf returns the shadow of kind k's address space.
func (c *Checker) spaceOf(k kind) *shadow {
	if k == kSegment || k == kPool {
		return &c.dev
	}
	return &c.heap
}

// make records a new thing of kind k at a, made by the current event.
// It reports an overlap with live things of the same class, and forgets
// dead things whose range the new one takes. It returns nil only for a
// malloc or realloc at the start of a live block: that allocation is
// reported and otherwise ignored, so the block keeps its size and site, as
// glibc's mtrace script does.
func (c *Checker) make(k kind, a traces.Addr, size uint64) *thing {
	sp := c.spaceOf(k)
	lo, hi := span(a, size)
	c.scratch = sp.overlapping(lo, hi, c.scratch[:0])
	c.hits = c.hits[:0]
	for _, o := range c.scratch {
		if o.state != dead && o.kind.class() == k.class() {
			c.hits = append(c.hits, o)
		}
	}
	if k == kBlock {
		for _, o := range c.hits {
			if o.kind == kBlock && o.lo == lo {
				c.report(traces.Overlap, a, o, c.opName()+" of "+strconv.FormatUint(size, 10)+
					" bytes at "+a.String()+", where "+o.String()+" is still allocated; the block keeps its size and site",
					o.made.related("allocated"))
				c.clearScratch()
				return nil
			}
		}
	}
	var t *thing
	for _, o := range c.scratch {
		switch {
		case o.state != dead:
			sp.nested = true
		case t == nil && o.lo == lo && o.hi == hi && o.kind != kObject:
			t = o // the same range: the new thing takes its place in the shadow
		default:
			sp.remove(o) // its range is taken: forget it
			c.recycle(o)
		}
	}
	if t != nil {
		t.reset()
	} else {
		t = c.newThing(k)
		t.lo, t.hi = lo, hi
		sp.insert(t)
	}
	c.made++
	t.size, t.id, t.kind, t.made = size, c.made, k, c.here
	c.nlive++
	if k.counted() {
		c.liveBytes += size
		c.peak = max(c.peak, c.liveBytes)
	}
	if len(c.hits) > 0 {
		c.overlap(t)
	}
	c.clearScratch()
	return t
}

// newThing returns a zero thing for kind k. Objects are allocated one by
// one: they can be named after they are forgotten (see recycle), and a
// slab stays in memory while any thing in it is referenced. Other things
// are recycled, or cut from a slab.
func (c *Checker) newThing(k kind) *thing {
	if k == kObject {
		return new(thing)
	}
	if n := len(c.spare); n > 0 {
		t := c.spare[n-1]
		c.spare[n-1] = nil
		c.spare = c.spare[:n-1]
		return t
	}
	if len(c.slab) == 0 {
		c.slab = make([]thing, slabSize)
	}
	t := &c.slab[0]
	c.slab = c.slab[1:]
	return t
}

// slabSize is the things allocated at once for kinds other than objects.
const slabSize = 256

// recycle keeps a forgotten thing for reuse. Only objects can be named
// after they are forgotten (by scope records, params and struct fields),
// so only other kinds are recycled.
func (c *Checker) recycle(t *thing) {
	if t.kind != kObject {
		t.lo, t.hi = 0, 0
		t.reset()
		c.spare = append(c.spare, t)
	}
}

// overlap reports that new thing t meets the live things in c.hits.
func (c *Checker) overlap(t *thing) {
	o := c.hits[0]
	msg := c.opName() + " of " + t.String() + " overlaps live " + o.String()
	if n := len(c.hits) - 1; n > 0 {
		msg += " and " + plural(n, "more")
	}
	rel := make([]traces.Related, 0, min(len(c.hits), 4))
	for _, o := range c.hits[:min(len(c.hits), 4)] {
		rel = append(rel, o.made.related("allocated"))
	}
	c.report(traces.Overlap, t.addr(), t, msg, rel...)
}

// clearScratch drops the scratch slices' pointers so they keep nothing alive.
func (c *Checker) clearScratch() {
	clear(c.scratch)
	clear(c.hits)
	c.scratch, c.hits = c.scratch[:0], c.hits[:0]
}

// kill ends t's life at event at. It stays in the shadow, and is
// remembered there until a new allocation takes its range.
func (c *Checker) kill(t *thing, at hist) {
	if t.state == dead {
		return
	}
	t.state = dead
	t.died = at
	c.nlive--
	if t.kind.counted() {
		c.liveBytes -= t.size
	}
	if t.kind == kPool && t.x != nil && t.x.seg != nil {
		t.x.seg.x.poolLive--
		t.x.seg = nil
	}
}

// lookup resolves an op's address to the live thing of a kind in mask
// that starts there. It returns nil (having reported why) when there is
// none, and nil without a report for NULL, which names nothing.
func (c *Checker) lookup(a traces.Addr, mask kindMask, sp *shadow) *thing {
	if a == 0 {
		return nil
	}
	t := sp.startingAt(uint64(a), mask)
	switch {
	case t == nil:
		c.nowhere(a, mask, sp)
		return nil
	case t.state != live:
		c.gone(t)
		return nil
	}
	return t
}
