package index

import (
	"math"
	"unsafe"
)

// Kind is what made a thing. The index gives kinds no meaning but the
// policies of Config; the rules' table of kinds says the rest.
type Kind uint8

// KindMask is a set of kinds; it holds kinds 0 to 63.
type KindMask uint64

// MaxKinds is how many kinds a KindMask holds.
const MaxKinds = 64

func (k Kind) Mask() KindMask { return 1 << k }

// Has reports whether k is in m.
func (m KindMask) Has(k Kind) bool { return m&k.Mask() != 0 }

// Space is an address space, numbered from 0; each has its own addresses.
type Space uint8

// Head is what the index reads of a thing: its range, id and kind, and
// whether it died. The rules' thing type embeds it (see Thing); the index
// never reads anything else of a thing.
type Head struct {
	Lo, Size uint64 // the range owned is Span(Lo, Size)
	idKind   uint64 // id<<8 | kind: fixed once made
	// Died is 1 + the event that ended the thing, 0 while it is live, and
	// negative (the rules' "due") while it is neither: all the index asks
	// is whether it is above 0.
	Died int
}

func (h *Head) ID() int    { return int(h.idKind >> 8) }
func (h *Head) Kind() Kind { return Kind(h.idKind) }

// SetID numbers the thing; the index prefers the newest, highest, id.
func (h *Head) SetID(id int) { h.idKind = uint64(id)<<8 | h.idKind&0xff }

// Dead reports whether the thing died: not live, and not due either.
func (h *Head) Dead() bool { return h.Died > 0 }

// Hi is the end of the range the thing owns.
func (h *Head) Hi() uint64 {
	_, hi := Span(h.Lo, h.Size)
	return hi
}

// Span returns the range an allocation of size bytes at a owns,
// [a, a+max(size,1)), clamped at the top of the space.
func Span(a, size uint64) (lo, hi uint64) {
	lo = a
	hi = lo + max(size, 1)
	if hi < lo {
		hi = math.MaxUint64
	}
	return lo, hi
}

// Thing is what an index needs of the rules' thing type T, through a
// pointer: its Head (embedded, so that the rules read t.Lo; the tuned
// index needs it first), and how to clear a slot for a new life. The index
// makes and recycles things, so that a forgotten thing's memory holds the
// next one.
type Thing[T any] interface {
	*T
	// Indexed returns the thing's Head (a method of its own name, since
	// the thing embeds Head).
	Indexed() *Head
	// Renew clears the thing for a new life as a kind k thing, keeping
	// only what a thing of that kind can reuse (see KeepsData).
	Renew(k Kind)
	// KeepsData reports whether the thing holds memory a later thing of a
	// kind not in Config.Lean can reuse; its slot is kept for one.
	KeepsData() bool
}

// headOf returns t's Head without a call: the tuned index reads heads on
// its hot paths, where a method of a type parameter would be a call
// through a dictionary. It holds for a T that begins with its Head, as
// NewTuned checks (checkHeadFirst); a nil t has a nil Head.
func headOf[T any](t *T) *Head { return (*Head)(unsafe.Pointer(t)) }

// checkHeadFirst panics unless T begins with its Head, which headOf needs.
func checkHeadFirst[T any, P Thing[T]]() {
	var t T
	if unsafe.Pointer(P(&t).Indexed()) != unsafe.Pointer(&t) {
		panic("index: the tuned index needs a thing type that embeds index.Head as its first field")
	}
}

// Config is what an index is told of the kinds, by the rules' table.
type Config[T any] struct {
	Spaces int // address spaces, numbered from 0
	// Lean kinds are most of a heap log: their things keep no data a later
	// thing reuses, so a slot is cleared without being read, and the index
	// keeps their deaths itself (see Died), so that most frees and mallocs
	// read no thing. At most the first seven kinds (entries hold a kind in
	// three bits; an eighth value means "read the thing").
	Lean KindMask
	// Pinned kinds may be named after the index forgets them (a scope
	// record naming a dead object): their things are made one by one with
	// NewPinned (which returns a thing ready for its life: Renew is not
	// called), never recycled, and left to the garbage collector.
	Pinned    KindMask
	NewPinned func() *T
}

// Hit is a thing a range query found, with what the index knows of it
// without reading it.
type Hit[T any] struct {
	Thing *T
	Kind  Kind
	Dead  bool
	at    hitAt // where the tuned index keeps it
}

// hitAt is where a Hit is in the tuned index.
type hitAt struct {
	ref    ref
	lo, hi uint64
	level  uint8
}
