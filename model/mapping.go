package model

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// Layer 4's mapped ranges: the pages of a virtual reservation that are
// backed by device memory (cuMemMap; PyTorch's expandable segments). The
// reservation itself is not traced (PyTorch records only the maps and
// unmaps), so what the rules know is which bytes are mapped: each dev_map
// makes a mapped range, a thing of the segments' overlap class, so that
// mapping bytes a live segment or range holds is an overlap. The pool
// hands out blocks in mapped bytes as in a segment, across ranges mapped
// one after another. dev_unmap may take any part of the mapped bytes: the
// ranges it meets die, and what it leaves of one it cuts lives on as a new
// range (made by the unmap, remembered as mapped where the range was),
// placed while the range cut is still live so that the index keeps the
// range, dead, for the bytes unmapped: a later use of them is then a
// use-after-free (or double-free) naming the unmap, as for a segment.

// devMap maps a range. NULL is a failed map.
func (c *Checker) devMap(op traces.Op, a traces.Addr, size uint64) {
	if a != 0 {
		c.make(op, kMapping, a, size)
	}
}

// devUnmap unmaps the bytes [a, a+size). Bytes not mapped are reported
// (double-free where a range held them once, invalid-address else); pool
// blocks handed out in mapped bytes it takes die with them, as with
// dev_free.
func (c *Checker) devUnmap(op traces.Op, a traces.Addr, size uint64) {
	if a == 0 {
		return
	}
	lo, hi := span(a, size)
	ranges := slices.Clone(c.mem.liveWithin(kMapping, lo, hi))
	slices.SortFunc(ranges, func(x, y *thing) int { return cmp.Compare(x.Lo, y.Lo) })
	c.unmapGap(op, a, size, lo, hi, ranges)
	for _, m := range ranges {
		cutLo, cutHi := max(lo, m.Lo), min(hi, m.hi())
		for _, p := range slices.Clone(c.mem.liveWithin(kPool, cutLo, cutHi)) {
			if p.x == nil || p.x.seg == nil { // in mapped bytes, not in a segment
				c.kill(p, c.here)
			}
		}
		var left [2]*thing // what the unmap leaves of m, placed before m dies
		if m.Lo < lo {
			left[0] = c.place(kMapping, m.Lo, lo)
		}
		if hi < m.hi() {
			left[1] = c.place(kMapping, hi, m.hi())
		}
		c.kill(m, c.here)
		for _, t := range left {
			if t != nil {
				c.remnant(t, m)
			}
		}
	}
}

// place puts a new thing of kind k over [lo, hi) in the index, overlaps
// and all, and does nothing else: the caller counts it.
func (c *Checker) place(k kind, lo, hi uint64) *thing {
	if t := c.mem.reuse(k, lo, hi, hi-lo); t != nil {
		return t
	}
	c.mem.meeting(k, lo, hi)
	return c.mem.place(k, lo, hi, hi-lo)
}

// unmapGap reports the first bytes of [lo, hi) that no range in ranges
// (the live ones the range meets, by address) maps.
func (c *Checker) unmapGap(op traces.Op, a traces.Addr, size uint64, lo, hi uint64, ranges []*thing) {
	at := lo
	for _, m := range ranges {
		if m.Lo > at {
			break
		}
		at = max(at, m.hi())
	}
	if at >= hi {
		return
	}
	gap := traces.Addr(at)
	msg := op.String() + " of " + a.String() + " (" + strconv.FormatUint(size, 10) + " bytes): " + gap.String() + " is not mapped"
	if m := c.mem.inside(deviceSpace, at, kMapping.mask()); m != nil {
		c.report(traces.DoubleFree, a, m, msg+": it lies in "+m.String()+m.deathPhrase(), m.history(nil)...)
		return
	}
	if s := c.mem.inside(deviceSpace, at, kSegment.mask()); s != nil {
		c.report(traces.InvalidAddress, a, s, msg+": it lies in "+s.String()+", which only dev_free returns", s.history(nil)...)
		return
	}
	c.report(traces.InvalidAddress, a, nil, msg+": nothing was mapped there")
}

// remnant counts t, placed for what an unmap left of the range m, as a
// live mapped range of its own, remembered as mapped where m was. It is
// told of at once: an unmap may leave two.
func (c *Checker) remnant(t, m *thing) {
	c.count(t)
	t.made, t.madeWhere = m.made, m.madeWhere
	if c.born != nil {
		c.watchBorn()
	}
}

// mappedEnd returns the end of the mapped bytes that run on from the live
// range m, through the live ranges mapped right after it.
func (c *Checker) mappedEnd(m *thing) uint64 {
	end := m.hi()
	for {
		n := c.mem.at(traces.Addr(end), kMapping.mask())
		if n == nil || n.state() != live || n.Size == 0 {
			return end
		}
		end = n.hi()
	}
}
