package model

import mathbits "math/bits"

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
type shadow struct {
	levels [nLevels]level
	huge   []entry // things too big for every level
	// nested is set once a thing was made over a live one (an arena
	// buffer in a heap block, a pool block in a segment, an overlap):
	// from then on a lookup must look at every level for the newest hit.
	nested bool
}

const nLevels = 3

// levelShifts are log2 of the cell widths: 128 B, 8 KiB, 512 KiB, 32 MiB.
var levelShifts = [nLevels]uint{9, 15, 21}

type level struct {
	shift uint
	tab   cellTable
	n     int // things kept at this level
	// occupied has a bit for each cell in use, 64 cells to a word, so that
	// a range query over many cells (a big allocation, looking for small
	// things inside it) visits only the cells in use.
	occupied map[uint64]uint64
}

func (s *shadow) init() {
	for i := range s.levels {
		s.levels[i].shift = levelShifts[i]
		s.levels[i].tab.init()
		s.levels[i].occupied = make(map[uint64]uint64)
	}
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
func (s *shadow) size() (things, cells int) {
	for i := range s.levels {
		things += s.levels[i].n
		cells += s.levels[i].tab.used
	}
	return things + len(s.huge), cells
}

func (s *shadow) insert(t *thing) {
	t.level = levelFor(t.hi - t.lo)
	e := entry{t.lo, t.hi, t}
	if t.level == nLevels {
		s.huge = append(s.huge, e)
		return
	}
	lv := &s.levels[t.level]
	last := (t.hi - 1) >> lv.shift
	for k := t.lo >> lv.shift; ; k++ {
		c, fresh := lv.tab.put(k)
		c.add(e)
		if fresh {
			lv.occupied[k/64] |= 1 << (k % 64)
		}
		if k == last {
			break
		}
	}
	lv.n++
}

func (s *shadow) remove(t *thing) {
	if t.level == nLevels {
		for i := range s.huge {
			if s.huge[i].t == t {
				s.huge[i] = s.huge[len(s.huge)-1]
				s.huge[len(s.huge)-1] = entry{}
				s.huge = s.huge[:len(s.huge)-1]
				return
			}
		}
		return
	}
	lv := &s.levels[t.level]
	last := (t.hi - 1) >> lv.shift
	for k := t.lo >> lv.shift; ; k++ {
		if c := lv.tab.get(k); c != nil {
			c.remove(t)
			if c.n == 0 {
				lv.tab.drop(k)
				if w := lv.occupied[k/64] &^ (1 << (k % 64)); w != 0 {
					lv.occupied[k/64] = w
				} else {
					delete(lv.occupied, k/64)
				}
			}
		}
		if k == last {
			break
		}
	}
	lv.n--
}

// better reports whether candidate c beats the best so far: a live (or
// due) thing beats a dead one when preferLive, then the newest wins.
func better(c, best *thing, preferLive bool) bool {
	if best == nil {
		return true
	}
	if preferLive && (c.state == dead) != (best.state == dead) {
		return best.state == dead
	}
	return c.id > best.id
}

// containing returns the newest thing of a kind in mask whose range holds
// a, live or dead: an access resolves to the innermost, most recent owner
// (a dead arena buffer inside a live heap block is still a dead buffer).
func (s *shadow) containing(a uint64, mask kindMask) *thing {
	var best *thing
	found := false
	for i := range s.levels {
		lv := &s.levels[i]
		if lv.n == 0 {
			continue
		}
		c := lv.tab.get(a >> lv.shift)
		if c == nil {
			continue
		}
		for j := 0; j < c.n; j++ {
			if e := c.at(j); e.lo <= a && a < e.hi {
				found = true
				if e.t.kind.mask()&mask != 0 && better(e.t, best, false) {
					best = e.t
				}
			}
		}
		if found && !s.nested {
			return best // disjoint things: nothing else can hold a
		}
	}
	for _, e := range s.huge {
		if e.lo <= a && a < e.hi && e.t.kind.mask()&mask != 0 && better(e.t, best, false) {
			best = e.t
		}
	}
	return best
}

// startingAt returns the thing of a kind in mask that starts at a: the
// newest live one, else the newest dead one still remembered.
func (s *shadow) startingAt(a uint64, mask kindMask) *thing {
	var best *thing
	found := false
	for i := range s.levels {
		lv := &s.levels[i]
		if lv.n == 0 {
			continue
		}
		c := lv.tab.get(a >> lv.shift)
		if c == nil {
			continue
		}
		for j := 0; j < c.n; j++ {
			if e := c.at(j); e.lo == a {
				found = true
				if e.t.kind.mask()&mask != 0 && better(e.t, best, true) {
					best = e.t
				}
			}
		}
		if found && !s.nested {
			return best
		}
	}
	for _, e := range s.huge {
		if e.lo == a && e.t.kind.mask()&mask != 0 && better(e.t, best, true) {
			best = e.t
		}
	}
	return best
}

// overlapping appends to out every thing whose range meets [lo, hi), each
// once, and returns out.
func (s *shadow) overlapping(lo, hi uint64, out []*thing) []*thing {
	for i := range s.levels {
		lv := &s.levels[i]
		if lv.n == 0 {
			continue
		}
		first, last := lo>>lv.shift, (hi-1)>>lv.shift
		if last-first < 4 {
			for k := first; ; k++ {
				if c := lv.tab.get(k); c != nil {
					out = c.overlapping(lo, hi, k, lv.shift, out)
				}
				if k == last {
					break
				}
			}
			continue
		}
		// Many cells: visit those in use, word by word of the occupancy
		// bitmap, or by walking the bitmap if the range has more words.
		if last/64-first/64 < uint64(len(lv.occupied)) {
			for w := first / 64; ; w++ {
				out = lv.overlappingWord(w, lv.occupied[w], lo, hi, first, last, out)
				if w == last/64 {
					break
				}
			}
		} else {
			for w, bits := range lv.occupied {
				if first/64 <= w && w <= last/64 {
					out = lv.overlappingWord(w, bits, lo, hi, first, last, out)
				}
			}
		}
	}
	for _, e := range s.huge {
		if e.lo < hi && lo < e.hi {
			out = append(out, e.t)
		}
	}
	return out
}

// overlappingWord appends the things meeting [lo, hi) in the cells of
// occupancy word w that lie within cells first..last.
func (lv *level) overlappingWord(w, bits, lo, hi, first, last uint64, out []*thing) []*thing {
	for bits != 0 {
		k := w*64 + uint64(mathbits.TrailingZeros64(bits))
		bits &= bits - 1
		if first <= k && k <= last {
			out = lv.tab.get(k).overlapping(lo, hi, k, lv.shift, out)
		}
	}
	return out
}

// overlapping appends the things of cell k that meet [lo, hi) and whose
// first cell in common with the range is k, so that a thing entered in
// several cells is reported once.
func (c *cell) overlapping(lo, hi, k uint64, shift uint, out []*thing) []*thing {
	for j := 0; j < c.n; j++ {
		if e := c.at(j); e.lo < hi && lo < e.hi && max(lo, e.lo)>>shift == k {
			out = append(out, e.t)
		}
	}
	return out
}

// live appends the things not dead to out, each once, in no order.
func (s *shadow) live(out []*thing) []*thing {
	for i := range s.levels {
		lv := &s.levels[i]
		for j := range lv.tab.slots {
			c := &lv.tab.slots[j]
			for n := 0; n < c.n; n++ {
				if e := c.at(n); e.t.state != dead && e.lo>>lv.shift == c.key-1 {
					out = append(out, e.t)
				}
			}
		}
	}
	for _, e := range s.huge {
		if e.t.state != dead {
			out = append(out, e.t)
		}
	}
	return out
}
