package index

// entry is a thing's entry in one cell: its start and, packed into meta,
// its length, ref and kind, which of its cells this is, whether it is dead
// and whether its size is its length. So the common layer-1 events (a free
// of a live block, a malloc over dead ones) are decided from entries alone,
// and touch no thing but to write to it. A zero meta is no entry (no ref
// is 0).
//
// Only a lean thing's first entry (part 0) is kept exactly dead or not;
// for other kinds, whose deaths are rarer and come from many places, the
// bit is set only when the entry is written for a dead thing, and the
// thing itself says (see shadow.isDead).
type entry struct {
	lo   uint64
	meta uint64
}

// The fields of entry.meta. A thing of a level spans at most 4 cell widths
// (levelFor), so its length fits in 24 bits (the top level's cells are 2
// MiB) and it touches at most 5 cells.
const (
	metaRef     = 0       // 32 bits: the thing's ref
	metaLen     = 32      // 24 bits: hi - lo
	metaPart    = 56      // 3 bits: the cell's number minus the thing's first cell's
	metaKind    = 59      // 3 bits: the thing's kind, or kindInThing
	metaDead    = 1 << 62 // the thing is dead (see above)
	metaInexact = 1 << 63 // the thing's size is not its length (0, or clamped at the top of the space)
	lenBits     = 24
	// kindInThing is the kind bits of a thing whose kind does not fit them:
	// its kind is read from the thing. Kinds below it are told by entries
	// alone.
	kindInThing = 7
)

// newEntry is the entry, for the thing named r, of kind k, over [lo, hi)
// and of size bytes, in the part'th cell it touches.
func newEntry(r ref, k Kind, lo, hi, size uint64, dead bool, part uint64) entry {
	n := hi - lo
	meta := uint64(r) | n<<metaLen | part<<metaPart | uint64(min(k, kindInThing))<<metaKind
	if size != n {
		meta |= metaInexact
	}
	if dead && part == 0 {
		meta |= metaDead
	}
	return entry{lo, meta}
}

// entryOf is newEntry for thing t.
func entryOf[T any, P Thing[T]](t *T, r ref, part uint64) entry {
	h := headOf(t)
	return newEntry(r, h.Kind(), h.Lo, h.Hi(), h.Size, h.Dead(), part)
}

func (e *entry) ref() ref     { return ref(e.meta) }
func (e *entry) len() uint64  { return e.meta >> metaLen & (1<<lenBits - 1) }
func (e *entry) hi() uint64   { return e.lo + e.len() }
func (e *entry) part() uint64 { return e.meta >> metaPart & 7 }
func (e *entry) dead() bool   { return e.meta&metaDead != 0 }

// kindBits is the entry's kind, or kindInThing.
func (e *entry) kindBits() Kind { return Kind(e.meta >> metaKind & 7) }
