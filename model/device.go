package model

import "github.com/tlcheck/tlcheck/traces"

// Layer 4: device segments and the pool that hands out blocks inside them.

// devMalloc reserves a segment. NULL is a failed cudaMalloc.
func (c *Checker) devMalloc(op traces.Op, a traces.Addr, size uint64) {
	if a != 0 {
		c.make(op, kSegment, a, size)
	}
}

// devFree returns a segment. Pool blocks still handed out from it die with
// it (their memory is gone), so a later use or put of one is reported.
func (c *Checker) devFree(op traces.Op, a traces.Addr) {
	t := c.lookup(op, a)
	if t == nil {
		return
	}
	c.kill(t, c.here)
	if t.x == nil || t.x.poolLive == 0 {
		return
	}
	for _, p := range c.mem.liveWithin(kPool, t.Lo, t.hi()) {
		if p.x != nil && p.x.seg == t {
			c.kill(p, c.here)
		}
	}
}

// poolGet hands out a pool block, which must lie inside a live segment,
// or in mapped bytes (mapping.go). The block is made in any case, taking
// the runtime's word, so that its put is checked too.
func (c *Checker) poolGet(op traces.Op, a traces.Addr, size uint64) {
	if a == 0 {
		return
	}
	lo, hi := span(a, size)
	seg := c.mem.inside(deviceSpace, lo, kSegment.mask()|kMapping.mask())
	what := func() string { return op.String() + " of " + a.String() } // only for a report
	switch {
	case seg == nil:
		c.report(traces.InvalidAddress, a, nil, what()+": the pool block lies outside every device segment and mapped range")
	case seg.state() != live:
		c.report(traces.UseAfterFree, a, seg, what()+": the pool block lies in "+seg.String()+seg.deathPhrase(),
			seg.history(nil)...)
		seg = nil
	case seg.kind() == kMapping && hi > c.mappedEnd(seg):
		c.report(traces.InvalidAddress, a, seg, what()+": the pool block runs past the end of the mapped bytes it starts in, in "+seg.String(),
			seg.madeAt().related("allocated"))
	case seg.kind() == kSegment && hi > seg.hi():
		c.report(traces.InvalidAddress, a, seg, what()+": the pool block runs past the end of "+seg.String(),
			seg.madeAt().related("allocated"))
	}
	t := c.make(op, kPool, a, size)
	if seg != nil && seg.state() == live && seg.kind() == kSegment {
		t.ext().seg = seg
		seg.ext().poolLive++
	}
}

// recordStream marks a pool block as used by another stream. For now the
// model checks only that it names a live pool block; the stream is for the
// stream-ordering rules to come (a block may not be reused before the
// streams that use it are done).
func (c *Checker) recordStream(op traces.Op, a traces.Addr) {
	c.lookup(op, a)
}

// poolPut puts a pool block back.
func (c *Checker) poolPut(op traces.Op, a traces.Addr) {
	if t := c.lookup(op, a); t != nil {
		c.kill(t, c.here)
	}
}
