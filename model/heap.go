package model

import (
	"errors"
	"github.com/tlcheck/tlcheck/internal/plural"
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// Layer 1: the raw heap, and accesses to any space.

// malloc makes a block for op (malloc, or realloc's malloc half). NULL is
// a failed malloc and changes nothing.
func (c *Checker) malloc(op traces.Op, a traces.Addr, size uint64) {
	if a != 0 {
		c.make(op, kBlock, a, size)
	}
}

// realloc is a free of ev.Addr and a malloc at ev.NewAddr in one step.
func (c *Checker) realloc(ev *traces.Event) error {
	if err := c.free(ev.Op, ev.Addr); err != nil {
		return err
	}
	c.malloc(ev.Op, ev.NewAddr, ev.Size)
	return nil
}

// free returns a block (or, with effects, an object) to the allocator, for
// op (free, or realloc's free half).
func (c *Checker) free(op traces.Op, a traces.Addr) error {
	if a == 0 {
		return nil
	}
	t, freed := c.freeLiveBlock(op, a)
	switch {
	case freed: // the fast path did it all
	case t == nil:
		c.nowhere(op, a, opMasks[op])
	case t.kind() == kObject && !c.effects:
		return c.inputError("addr", errors.New(op.String()+" of "+t.String()+
			": the trace frees a managed object, so its header must declare \"effects\": true"))
	case t.kind() == kObject:
		c.freeObject(op, t)
	case t.state() != live:
		c.reportNotLive(op, t)
	default:
		c.kill(t, c.here)
	}
	return nil
}

// access checks a read or write: its first and last byte must lie in live
// things of its space. Through an arena variable, the variable's slot must
// still hold that variable.
func (c *Checker) access(ev *traces.Event) {
	if ev.Var != "" && c.staleVar(ev) {
		return
	}
	a := ev.Addr
	if a == 0 {
		c.report(traces.InvalidAddress, a, nil, ev.Op.String()+" of NULL")
		return
	}
	sp := heapSpace
	if ev.Space == traces.SpaceDevice {
		sp = deviceSpace
	}
	n := uint64(1)
	if ev.HasSize {
		n = max(ev.Size, 1)
	}
	lo, hi := span(a, n)
	t := c.mem.inside(sp, lo, anyKind)
	if !c.accessible(ev, t, a, n) {
		return
	}
	if ev.Op == traces.OpWrite {
		c.wroteInto(t)
	}
	if hi <= t.hi() {
		return
	}
	last := hi - 1
	if u := c.mem.inside(sp, last, anyKind); c.accessible(ev, u, traces.Addr(last), n) && ev.Op == traces.OpWrite {
		c.wroteInto(u)
	}
}

// accessible reports whether t, the owner of byte b of access ev of n
// bytes, is live, and reports the violation if not.
func (c *Checker) accessible(ev *traces.Event, t *thing, b traces.Addr, n uint64) bool {
	if t != nil && t.state() == live {
		return true
	}
	what := ev.Op.String() + " of " + plural.Count(n, "byte") + " at " + ev.Addr.String()
	if ev.Space == traces.SpaceDevice {
		what += " (device)"
	}
	switch {
	case t == nil && b == ev.Addr:
		c.report(traces.InvalidAddress, ev.Addr, nil, what+": nothing is allocated there")
	case t == nil:
		c.report(traces.InvalidAddress, ev.Addr, nil, what+": its last byte, "+b.String()+", is outside every allocation")
	default:
		c.report(traces.UseAfterFree, ev.Addr, t, what+", "+strconv.FormatUint(uint64(b)-t.Lo, 10)+
			" bytes into "+t.String()+t.deathPhrase(), t.history(nil)...)
	}
	return false
}
