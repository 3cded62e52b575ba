package index

// shadow maps the addresses of one space to the things remembered there
// (live ones, and dead ones until a new allocation takes their range), so
// that finding what an address hits costs a few hash lookups, not a scan.
//
// It is a sparse, multi-level page table. A thing of n bytes lives at the
// lowest level whose cells are at least n/4 bytes wide, so it is entered in
// at most five cells there (usually one or two); things too big for every
// level go to a short list that is scanned. A point lookup reads one cell
// per populated level. While no two remembered things overlap (the common
// case: a correct allocator), a lookup stops at the first hit.
//
// The shadow names things by ref (see store) and keeps their ranges, kinds
// and deaths in its entries, so that it answers most questions without
// reading a thing: on a large heap, each thing read is a cache miss.
type shadow[T any, P Thing[T]] struct {
	store  *store[T, P] // what its entries' refs name
	levels [nLevels]level
	huge   []hugeEntry[T] // things too big for every level
	lean   KindMask       // the store's: kinds whose first entries keep their deaths
	// nested is set once a thing was made over a live one (an arena
	// buffer in a heap block, a pool block in a segment, an overlap):
	// from then on a lookup must look at every level for the newest hit.
	nested bool
}

type hugeEntry[T any] struct {
	lo, hi uint64
	r      ref
	t      *T
}

const nLevels = 3

// levelShifts are log2 of the cell widths: 1 KiB, 32 KiB, 2 MiB.
//
// Level 0 holds most of a heap log, and its cells' width sets what a
// block costs: a cell's entries take a bucket of eight (128 bytes) however
// few they are. Cells of 1 KiB hold six or seven blocks of a typical heap
// (chunks of 32 to 272 bytes), so the buckets are mostly full; cells of
// 512 B left them half empty, about 20 bytes more per live block
// (BenchmarkLiveBlocks in the model: 123 against 101), and were no faster.
// A heap of the smallest chunks (32 bytes) fills a cell's bucket four
// times over, so its lookups walk four buckets instead of two; replaying
// such a log was as fast either way.
var levelShifts = [nLevels]uint{10, 15, 21}

type level struct {
	tab cellTable
	n   int // things kept at this level
	// occupied has a bit for each cell in use, 64 cells to a word, so that
	// a range query over many cells (a big allocation, looking for small
	// things inside it) visits only the cells in use.
	occupied map[uint64]uint64
}

func (s *shadow[T, P]) init(st *store[T, P]) {
	s.store, s.lean = st, st.lean
	for i := range s.levels {
		s.levels[i].tab.init(levelShifts[i], i > 0)
		s.levels[i].occupied = nil // made with the level's first cell
	}
}

// reset forgets every thing, as init leaves the shadow, keeping its
// tables' memory where it is small (see cellTable.reset) and its levels'
// occupied maps, emptied.
func (s *shadow[T, P]) reset() {
	for i := range s.levels {
		lv := &s.levels[i]
		lv.tab.reset()
		lv.n = 0
		clear(lv.occupied)
	}
	clear(s.huge)
	s.huge = s.huge[:0]
	s.nested = false
}

// levelFor returns the level for a range of n bytes (nLevels: the huge list).
func levelFor(n uint64) uint8 {
	for i, sh := range levelShifts {
		if n <= 4<<sh {
			return uint8(i)
		}
	}
	return nLevels
}

// size returns the number of things kept and of cells in use, for tests
// that prove the shadow is bounded.
func (s *shadow[T, P]) size() (things, cells int) {
	for i := range s.levels {
		things += s.levels[i].n
		cells += s.levels[i].tab.cells
	}
	return things + len(s.huge), cells
}

// isDead reports whether the thing of e is dead: e says so for a lean
// thing's first entry, and may not for any other.
func (s *shadow[T, P]) isDead(e *entry) bool {
	switch {
	case e.dead():
		return true
	case e.part() == 0 && s.lean.Has(e.kindBits()):
		return false
	}
	return headOf(s.store.at(e.ref())).Dead()
}

// kind returns the kind of e's thing: e says, unless it is too big for
// its bits.
func (s *shadow[T, P]) kind(e *entry) Kind {
	if k := e.kindBits(); k != kindInThing {
		return k
	}
	return headOf(s.store.at(e.ref())).Kind() // no call, so that kind inlines
}

// cells returns the first and last cell that [lo, hi) touches at level l.
func (s *shadow[T, P]) cells(l uint8, lo, hi uint64) (first, last uint64) {
	sh := s.levels[l].tab.shift
	return lo >> sh, (hi - 1) >> sh
}

// insert enters t, which the store names r, in every cell its range
// touches.
func (s *shadow[T, P]) insert(t *T, r ref) {
	h := headOf(t)
	lo, hi := h.Lo, h.Hi()
	l := levelFor(hi - lo)
	if l == nLevels {
		s.huge = append(s.huge, hugeEntry[T]{lo, hi, r, t})
		return
	}
	lv := &s.levels[l]
	first, last := s.cells(l, lo, hi)
	for k := first; ; k++ {
		if lv.tab.add(entryOf[T, P](t, r, k-first)) {
			if lv.occupied == nil {
				lv.occupied = make(map[uint64]uint64)
			}
			lv.occupied[k/64] |= 1 << (k % 64)
		}
		if k == last {
			break
		}
	}
	lv.n++
}

// remove forgets the thing named r, kept at level l with range [lo, hi).
func (s *shadow[T, P]) remove(r ref, lo, hi uint64, l uint8) {
	if l == nLevels {
		for i := range s.huge {
			if s.huge[i].r == r {
				s.huge[i] = s.huge[len(s.huge)-1]
				s.huge[len(s.huge)-1] = hugeEntry[T]{}
				s.huge = s.huge[:len(s.huge)-1]
				return
			}
		}
		return
	}
	lv := &s.levels[l]
	first, last := s.cells(l, lo, hi)
	for k := first; ; k++ {
		if !lv.tab.remove(k, r) {
			if w := lv.occupied[k/64] &^ (1 << (k % 64)); w != 0 {
				lv.occupied[k/64] = w
			} else {
				delete(lv.occupied, k/64)
			}
		}
		if k == last {
			break
		}
	}
	lv.n--
}

// reshape rewrites the entries of the thing named old, kept at level l,
// for t, named r, whose range must touch the same cells (see sameCells).
func (s *shadow[T, P]) reshape(t *T, old, r ref, l uint8) {
	tab := &s.levels[l].tab
	h := headOf(t)
	first, last := s.cells(l, h.Lo, h.Hi())
	for k := first; ; k++ {
		*tab.find(k, old) = entryOf[T, P](t, r, k-first)
		if k == last {
			break
		}
	}
}

// markDead records in t's first entry that t, a lean thing, died.
func (s *shadow[T, P]) markDead(t *T) {
	h := headOf(t)
	l := levelFor(h.Hi() - h.Lo)
	if l == nLevels {
		return
	}
	tab := &s.levels[l].tab
	it := tab.cell(h.Lo >> tab.shift)
	for b := it.nextBucket(); b != nil; b = it.nextBucket() {
		for j := range b {
			if e := &b[j]; e.lo == h.Lo && e.meta != 0 && s.store.at(e.ref()) == t {
				e.meta |= metaDead
				return
			}
		}
	}
}
