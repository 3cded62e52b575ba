package model

// ref names a thing in the store. The shadow keeps refs, not pointers: 4
// bytes instead of 8, and tables the garbage collector need not scan.
type ref uint32

// objectRef marks the refs of objects, which live in store.objs.
const objectRef ref = 1 << 31

// store holds the things the shadow remembers. Blocks, arena buffers,
// segments and pool blocks are cut from chunks of things (a chunk never
// moves, so pointers to its things stay valid) and reused once forgotten.
// Objects are allocated one by one and only indexed here: a scope record,
// a param or a struct field can name an object after the shadow forgets
// it, so the garbage collector, not the store, decides when one is gone.
//
// A block never has an extra, so a forgotten block's slot can be cleared
// and reused without being read: on a large heap it is seldom in cache.
// Slots of other kinds keep their extra for the next thing of a kind that
// needs one.
type store struct {
	chunks []*[chunkLen]thing
	next   ref      // the slab's first never-used slot; slot 0 is never used, so no ref is 0
	spare  []ref    // slots of forgotten things without an extra
	spareX []ref    // slots of forgotten things with one
	objs   []*thing // objects, by ref &^ objectRef
	free   []ref    // unused indexes of objs
}

const (
	chunkShift = 10
	chunkLen   = 1 << chunkShift
)

// at returns the thing named r.
func (s *store) at(r ref) *thing {
	if r&objectRef != 0 {
		return s.objs[r&^objectRef]
	}
	return &s.chunks[r>>chunkShift][r&(chunkLen-1)]
}

// add returns a zero thing for kind k, and its ref.
func (s *store) add(k kind) (*thing, ref) {
	if k == kObject {
		return s.addObject()
	}
	if k != kBlock {
		if r, ok := pop(&s.spareX); ok {
			return s.renew(r, k), r
		}
	}
	if r, ok := pop(&s.spare); ok {
		return s.renew(r, k), r
	}
	if s.next == 0 {
		s.next = 1
	}
	if int(s.next>>chunkShift) == len(s.chunks) {
		if s.next >= objectRef {
			panic("model: more than 2^31 things remembered at once")
		}
		s.chunks = append(s.chunks, new([chunkLen]thing))
	}
	r := s.next
	s.next++
	return s.renew(r, k), r
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

// addObject allocates an object and its extra together (every object has
// one), and indexes it.
func (s *store) addObject() (*thing, ref) {
	o := &struct {
		t thing
		x extra
	}{}
	o.t.idKind = uint64(kObject)
	o.t.x = &o.x
	o.x.zero = hist{event: -1}
	r, ok := pop(&s.free)
	if !ok {
		r = ref(len(s.objs))
		s.objs = append(s.objs, nil)
	}
	s.objs[r] = &o.t
	return &o.t, r | objectRef
}

// renew clears the slab thing named r for a new life as a kind k thing.
func (s *store) renew(r ref, k kind) *thing {
	t := s.at(r)
	if k == kBlock {
		*t = thing{idKind: uint64(k)} // a block slot has no extra: nothing to read
		return t
	}
	x := t.x
	*t = thing{idKind: uint64(k), x: x}
	if x != nil {
		*x = extra{zero: hist{event: -1}}
	}
	return t
}

// forget releases the thing named r, of kind k, which the shadow no longer
// holds. An object only leaves the index.
func (s *store) forget(r ref, k kind) {
	switch {
	case k == kObject:
		s.objs[r&^objectRef] = nil
		s.free = append(s.free, r&^objectRef)
	case k == kBlock:
		s.spare = append(s.spare, r)
	case s.at(r).x != nil:
		s.spareX = append(s.spareX, r)
	default:
		s.spare = append(s.spare, r)
	}
}
