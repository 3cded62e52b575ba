package model

import (
	"errors"
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// Layer 1: the raw heap, and accesses to any space.

// malloc makes a block. NULL is a failed malloc and changes nothing.
func (c *Checker) malloc(a traces.Addr, size uint64) {
	if a != 0 {
		c.make(kBlock, a, size)
	}
}

// realloc is a free of ev.Addr and a malloc at ev.NewAddr in one step.
func (c *Checker) realloc(ev *traces.Event) error {
	if err := c.free(ev.Addr); err != nil {
		return err
	}
	c.malloc(ev.NewAddr, ev.Size)
	return nil
}

// free returns a block (or, with effects, an object) to the allocator.
func (c *Checker) free(a traces.Addr) error {
	if a == 0 {
		return nil
	}
	if e, _ := c.heap.entryAt(uint64(a)); e != nil && e.kind() == kBlock && !e.dead() {
		c.freeBlock(e)
		return nil
	}
	t := c.heap.startingAt(uint64(a), freeable)
	switch {
	case t == nil:
		c.nowhere(a, freeable)
	case t.kind() == kObject && !c.effects:
		return c.inputError("addr", errors.New(c.opName()+" of "+t.String()+
			": the trace frees a managed object, so its header must declare \"effects\": true"))
	case t.kind() == kObject:
		c.freeObject(t)
	case t.state() != live:
		c.gone(t)
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
		c.report(traces.InvalidAddress, a, nil, c.opName()+" of NULL")
		return
	}
	sp := &c.heap
	if ev.Space == traces.SpaceDevice {
		sp = &c.dev
	}
	n := uint64(1)
	if ev.HasSize {
		n = max(ev.Size, 1)
	}
	lo, hi := span(a, n)
	t := sp.containing(lo, anyKind)
	if !c.accessible(t, a, n, ev.Space) {
		return
	}
	if hi <= t.hi() {
		return
	}
	last := hi - 1
	c.accessible(sp.containing(last, anyKind), traces.Addr(last), n, ev.Space)
}

// accessible reports whether t, the owner of byte b of an access of n
// bytes, is live, and reports the violation if not.
func (c *Checker) accessible(t *thing, b traces.Addr, n uint64, sp traces.Space) bool {
	if t != nil && t.state() == live {
		return true
	}
	what := c.opName() + " of " + plural(int(min(n, 1<<30)), "byte") + " at " + c.ev.Addr.String()
	if sp == traces.SpaceDevice {
		what += " (device)"
	}
	switch {
	case t == nil && b == c.ev.Addr:
		c.report(traces.InvalidAddress, c.ev.Addr, nil, what+": nothing is allocated there")
	case t == nil:
		c.report(traces.InvalidAddress, c.ev.Addr, nil, what+": its last byte, "+b.String()+", is outside every allocation")
	default:
		c.report(traces.UseAfterFree, c.ev.Addr, t, what+", "+strconv.FormatUint(uint64(b)-t.lo, 10)+
			" bytes into "+t.String()+t.deathPhrase(), t.history(nil)...)
	}
	return false
}
