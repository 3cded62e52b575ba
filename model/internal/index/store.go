package index

// ref names a thing in the store. The shadow keeps refs, not pointers: 4
// bytes instead of 8, and tables the garbage collector need not scan.
type ref uint32

// pinnedRef marks the refs of pinned things, which live in store.pinned.
const pinnedRef ref = 1 << 31

// store holds the things the shadows remember. Things of kinds not pinned
// are cut from chunks (a chunk never moves, so pointers to its things stay
// valid) and reused once forgotten. Pinned things are made one by one and
// only indexed here: the rules may name one after the shadow forgets it,
// so the garbage collector, not the store, decides when one is gone.
//
// A lean thing never keeps data, so a forgotten lean thing's slot can be
// cleared and reused without being read: on a large heap it is seldom in
// cache. Slots of other kinds keep their data for the next thing of a kind
// that needs some.
type store[T any, P Thing[T]] struct {
	chunks    []*[chunkLen]T
	next      ref   // the slab's first never-used slot; slot 0 is never used, so no ref is 0
	spare     []ref // slots of forgotten things without data
	spareData []ref // slots of forgotten things with some
	pinned    []*T  // pinned things, by ref &^ pinnedRef
	free      []ref // unused indexes of pinned
	lean      KindMask
	pin       KindMask
	newPinned func() *T
}

const (
	chunkShift = 10
	chunkLen   = 1 << chunkShift
)

// at returns the thing named r.
func (s *store[T, P]) at(r ref) *T {
	if r&pinnedRef != 0 {
		return s.pinned[r&^pinnedRef]
	}
	return &s.chunks[r>>chunkShift][r&(chunkLen-1)]
}

// reset forgets every thing, as a new store with the same kinds. It keeps
// the first chunk, emptied (a short trace, as the property tests check by
// the thousand, never needs a second), and the spare lists' arrays; it
// lets the garbage collector have the other chunks and the pinned things.
func (s *store[T, P]) reset() {
	if len(s.chunks) > 0 {
		clear(s.chunks[0][:min(int(s.next), chunkLen)])
		clear(s.chunks[1:])
		s.chunks = s.chunks[:1]
	}
	clear(s.pinned)
	s.next, s.spare, s.spareData, s.pinned, s.free = 0, s.spare[:0], s.spareData[:0], s.pinned[:0], s.free[:0]
}

// add returns a new thing of kind k, its range [lo, lo+size), and its ref.
func (s *store[T, P]) add(k Kind, lo, size uint64) (*T, ref) {
	if s.pin.Has(k) {
		return s.addPinned(k, lo, size)
	}
	if !s.lean.Has(k) {
		if r, ok := pop(&s.spareData); ok {
			return s.renew(r, k, lo, size), r
		}
	}
	if r, ok := pop(&s.spare); ok {
		return s.renew(r, k, lo, size), r
	}
	if s.next == 0 {
		s.next = 1
	}
	if int(s.next>>chunkShift) == len(s.chunks) {
		if s.next >= pinnedRef {
			panic("model: more than 2^31 things remembered at once")
		}
		s.chunks = append(s.chunks, new([chunkLen]T))
	}
	r := s.next
	s.next++
	return s.renew(r, k, lo, size), r
}

func pop(refs *[]ref) (ref, bool) {
	n := len(*refs)
	if n == 0 {
		return 0, false
	}
	r := (*refs)[n-1]
	*refs = (*refs)[:n-1]
	return r, true
}

// addPinned makes a pinned thing and indexes it.
func (s *store[T, P]) addPinned(k Kind, lo, size uint64) (*T, ref) {
	t := s.newPinned() // new, so ready for its life: nothing to renew
	setHead(headOf(t), k, lo, size)
	r, ok := pop(&s.free)
	if !ok {
		r = ref(len(s.pinned))
		s.pinned = append(s.pinned, nil)
	}
	s.pinned[r] = t
	return t, r | pinnedRef
}

// renew clears the slab thing named r for a new life as a kind k thing
// over [lo, lo+size).
func (s *store[T, P]) renew(r ref, k Kind, lo, size uint64) *T {
	t := s.at(r)
	if s.lean.Has(k) {
		var zero T
		*t = zero // a lean slot keeps nothing: nothing to read
	} else {
		P(t).Renew(k)
	}
	setHead(headOf(t), k, lo, size)
	return t
}

func setHead(h *Head, k Kind, lo, size uint64) {
	*h = Head{Lo: lo, Size: size, idKind: uint64(k)}
}

// forget releases the thing named r, of kind k, which no shadow holds any
// longer. A pinned thing only leaves the index.
func (s *store[T, P]) forget(r ref, k Kind) {
	switch {
	case r&pinnedRef != 0:
		s.pinned[r&^pinnedRef] = nil
		s.free = append(s.free, r&^pinnedRef)
	case s.lean.Has(k) || !P(s.at(r)).KeepsData():
		s.spare = append(s.spare, r)
	default:
		s.spareData = append(s.spareData, r)
	}
}
