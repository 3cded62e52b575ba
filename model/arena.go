package model

import (
	"github.com/tlcheck/tlcheck/internal/plural"
	"slices"
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// Layer 3: arena frames. A frame has slots; each slot holds a buffer and,
// optionally, the variable now using it. Every buffer handed out from a
// frame dies when the frame exits.

type frame struct {
	enter  hist
	nslots int
	slots  []slotState        // slots below denseSlots, grown on demand
	sparse map[int]*slotState // higher slots, so a huge frame costs nothing up front
	bufs   []*thing           // every buffer handed out from the frame
	vars   []binding          // variables bound in the frame, few: scanned
}

// denseSlots bounds the slots kept in a slice; a frame declaring more
// keeps the rest in a map.
const denseSlots = 4096

type slotState struct {
	buf   *thing
	v     string // the variable the slot holds now, "" if none
	since hist   // the arena_get that bound v
}

type binding struct {
	name string
	slot int
	at   hist
}

func (f *frame) slot(i int) *slotState {
	if i < denseSlots {
		if i >= len(f.slots) {
			// Slots past len were cleared when last used: they come back zero.
			f.slots = slices.Grow(f.slots, i+1-len(f.slots))[:i+1]
		}
		return &f.slots[i]
	}
	if f.sparse == nil {
		f.sparse = make(map[int]*slotState)
	}
	s := f.sparse[i]
	if s == nil {
		s = new(slotState)
		f.sparse[i] = s
	}
	return s
}

func (f *frame) binding(name string) *binding {
	for i := range f.vars {
		if f.vars[i].name == name {
			return &f.vars[i]
		}
	}
	return nil
}

func (c *Checker) fnEnter(op traces.Op, slots int) {
	n := len(c.frames)
	if n < cap(c.frames) {
		c.frames = c.frames[:n+1] // reuse the popped frame's arrays
	} else {
		c.frames = append(c.frames, frame{})
	}
	f := &c.frames[n]
	f.enter, f.nslots = c.here, max(slots, 0)
	f.slots, f.bufs, f.vars, f.sparse = f.slots[:0], f.bufs[:0], f.vars[:0], nil
}

func (c *Checker) fnExit(op traces.Op) {
	n := len(c.frames)
	if n == 0 {
		c.misuse(op, 0, nil, "No function frame")
		return
	}
	f := &c.frames[n-1]
	for _, t := range f.bufs {
		c.kill(t, c.here)
	}
	f.empty()
	c.frames = c.frames[:n-1]
}

// empty clears a frame's arrays for the frame that next takes its place
// in the stack (fnEnter): slot grows f.slots over elements past its
// length, which must be zero.
func (f *frame) empty() {
	clear(f.slots)
	clear(f.bufs)
	clear(f.vars)
	f.sparse = nil
}

// arenaGet hands out a buffer for a slot of the top frame: the slot's
// current buffer again if the address is the same, else a new buffer (the
// old one lives on until the frame exits).
func (c *Checker) arenaGet(ev *traces.Event) {
	n := len(c.frames)
	if n == 0 {
		c.misuse(ev.Op, ev.Addr, nil, "No function frame")
		return
	}
	f := &c.frames[n-1]
	if ev.Slot < 0 || ev.Slot >= f.nslots {
		c.misuse(ev.Op, ev.Addr, nil, "slot "+strconv.Itoa(ev.Slot)+" is out of range: the frame entered at "+
			f.enter.at()+" has "+plural.Count(f.nslots, "slot"), f.enter.related("frame entered"))
		return
	}
	if ev.Addr == 0 {
		return // a zero-sized buffer: nothing to hand out
	}
	s := f.slot(ev.Slot)
	switch {
	case s.buf != nil && s.buf.Lo == uint64(ev.Addr) && ev.Size > s.buf.Size:
		// The slot's buffer again, asked for more than before: the runtime's
		// buffer held more than it was first asked for (an arena rounds
		// sizes up) and now says so. It grows in place, as a realloc that
		// keeps its address does: the old extent ends here, and the larger
		// one is checked against every other live buffer.
		c.kill(s.buf, c.here)
		fallthrough
	case s.buf == nil || s.buf.Lo != uint64(ev.Addr):
		t := c.make(ev.Op, kArena, ev.Addr, ev.Size)
		x := t.ext()
		x.slot = ev.Slot
		f.bufs = append(f.bufs, t)
		s.buf = t
	}
	if ev.Var == "" {
		return
	}
	s.v, s.since = ev.Var, c.here
	if b := f.binding(ev.Var); b != nil {
		b.slot, b.at = ev.Slot, c.here
	} else {
		f.vars = append(f.vars, binding{name: ev.Var, slot: ev.Slot, at: c.here})
	}
}

// staleVar reports a read or write through a variable of the top frame
// whose slot now holds another variable, and says whether it did.
func (c *Checker) staleVar(ev *traces.Event) bool {
	n := len(c.frames)
	if n == 0 {
		return false
	}
	f := &c.frames[n-1]
	b := f.binding(ev.Var)
	if b == nil {
		return false
	}
	s := f.slot(b.slot)
	if s.v == ev.Var {
		return false
	}
	var rel []traces.Related
	rel = append(rel, b.at.related("variable "+strconv.Quote(b.name)+" bound"))
	rel = append(rel, s.since.related("slot given to variable "+strconv.Quote(s.v)))
	c.report(traces.StaleReuse, ev.Addr, s.buf, ev.Op.String()+" through variable "+strconv.Quote(ev.Var)+
		" at "+ev.Addr.String()+", but its slot "+strconv.Itoa(b.slot)+" has held variable "+
		strconv.Quote(s.v)+" since "+s.since.at(), rel...)
	return true
}
