package input

import (
	"testing"
	"unsafe"
)

// TestSlotFirstLineHoldsMallocAndFree holds the slot's layout to what its
// comment promises: the fields the model reads of every malloc, free and
// realloc (the position, the op, whether a count was given, the addresses,
// the size and the site) lie in the slot's first cache line, so that such
// an event costs the model one line handed over from the reading core. A
// field moved past it (HasCount at the end of traces.Event made mtrace
// replay 1.2x slower, issue 28) fails here by name.
func TestSlotFirstLineHoldsMallocAndFree(t *testing.T) {
	var s slot
	ev := unsafe.Offsetof(s.ev)
	for _, f := range []struct {
		name      string
		off, size uintptr
	}{
		{"pos", unsafe.Offsetof(s.pos), unsafe.Sizeof(s.pos)},
		{"Op", ev + unsafe.Offsetof(s.ev.Op), unsafe.Sizeof(s.ev.Op)},
		{"HasCount", ev + unsafe.Offsetof(s.ev.HasCount), unsafe.Sizeof(s.ev.HasCount)},
		{"Addr", ev + unsafe.Offsetof(s.ev.Addr), unsafe.Sizeof(s.ev.Addr)},
		{"NewAddr", ev + unsafe.Offsetof(s.ev.NewAddr), unsafe.Sizeof(s.ev.NewAddr)},
		{"Size", ev + unsafe.Offsetof(s.ev.Size), unsafe.Sizeof(s.ev.Size)},
		{"Site", ev + unsafe.Offsetof(s.ev.Site), unsafe.Sizeof(s.ev.Site)},
	} {
		if end := f.off + f.size; end > cacheLine {
			t.Errorf("%s ends %d bytes into a slot, past its first cache line (%d bytes)", f.name, end, cacheLine)
		}
	}
	if n := unsafe.Sizeof(s); n%cacheLine != 0 {
		t.Errorf("a slot is %d bytes, not whole cache lines", n)
	}
}
