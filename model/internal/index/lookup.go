package index

import mathbits "math/bits"

// The shadow's queries: by start, by containment, by range.

// better reports whether candidate c beats the best so far (nil: none
// yet): a live (or due) thing beats a dead one when preferLive, then the
// newest wins.
func better(c, best *Head, preferLive bool) bool {
	if best == nil {
		return true
	}
	if preferLive && c.Dead() != best.Dead() {
		return best.Dead()
	}
	return c.ID() > best.ID()
}

// entryAt returns the first entry of the thing starting at a, and the
// level it is kept at, when the shadow can tell without reading things:
// while things do not nest, at most one starts there. It returns nil when
// things nest, or when no thing of a level starts there (a huge one may).
func (s *shadow[T, P]) entryAt(a uint64) (*entry, uint8) {
	if s.nested {
		return nil, 0
	}
	for i := range s.levels {
		lv := &s.levels[i]
		if lv.n == 0 {
			continue
		}
		if e := lv.tab.startAt(a>>lv.tab.shift, a); e != nil {
			return e, uint8(i)
		}
	}
	return nil, 0
}

// reusable returns the first entry, and the level, of a dead thing that
// an allocation of kind k over [lo, hi) can take the place of, or nil. A
// heap allocator reuses freed chunks all the time, for blocks of about
// their former size, so this is the common case of a new thing, decided
// here in a lookup or two instead of a range query: while things do not
// nest, the things remembered are disjoint, so if a dead thing of the same
// kind starts at lo, anything else the new range meets must start between
// its end and hi. The new thing must also keep to the dead one's level and
// cells.
func (s *shadow[T, P]) reusable(k Kind, lo, hi uint64) (*entry, uint8) {
	e, l := s.entryAt(lo)
	if e == nil || s.kind(e) != k || levelFor(hi-lo) != l || !s.isDead(e) {
		return nil, 0
	}
	end := e.hi()
	if _, last := s.cells(l, lo, hi); last != (end-1)>>s.levels[l].tab.shift {
		return nil, 0
	}
	if hi > end && s.startsIn(end, hi) {
		return nil, 0
	}
	return e, l
}

// startsIn reports whether a thing may start in [lo, hi): it answers
// false only when none does. It looks at one cell of each level, so it
// answers true for a range across cells.
func (s *shadow[T, P]) startsIn(lo, hi uint64) bool {
	for i := range s.levels {
		lv := &s.levels[i]
		if lv.n == 0 {
			continue
		}
		k := lo >> lv.tab.shift
		if (hi-1)>>lv.tab.shift != k {
			return true
		}
		if lv.tab.startsIn(k, lo, hi) {
			return true
		}
	}
	for _, e := range s.huge {
		if lo <= e.lo && e.lo < hi {
			return true
		}
	}
	return false
}

// containing returns the newest thing of a kind in mask whose range holds
// a, live or dead: an access resolves to the innermost, most recent owner
// (a dead arena buffer inside a live heap block is still a dead buffer).
func (s *shadow[T, P]) containing(a uint64, mask KindMask) *T {
	var best *T
	if !s.nested {
		// Disjoint things: the first that holds a is the only one.
		for i := range s.levels {
			lv := &s.levels[i]
			if lv.n == 0 {
				continue
			}
			if e := lv.tab.holding(a>>lv.tab.shift, a); e != nil {
				return s.pick(e, mask)
			}
		}
	} else {
		best = s.newest(a, mask, false, func(e *entry) bool { return e.lo <= a && a < e.hi() })
	}
	for _, e := range s.huge {
		if e.lo <= a && a < e.hi && mask.Has(headOf(e.t).Kind()) && better(headOf(e.t), headOf(best), false) {
			best = e.t
		}
	}
	return best
}

// newest returns the thing better prefers among those whose entry in a's
// cell of some level matches and whose kind is in mask: the search of a
// shadow whose things nest, where the first hit is not the only one.
func (s *shadow[T, P]) newest(a uint64, mask KindMask, preferLive bool, match func(*entry) bool) *T {
	var best *T
	for i := range s.levels {
		lv := &s.levels[i]
		if lv.n == 0 {
			continue
		}
		it := lv.tab.cell(a >> lv.tab.shift)
		for b := it.nextBucket(); b != nil; b = it.nextBucket() {
			for j := range b.used() {
				if e := &b[j]; match(e) && mask.Has(s.kind(e)) {
					if t := s.store.at(e.ref()); better(headOf(t), headOf(best), preferLive) {
						best = t
					}
				}
			}
		}
	}
	return best
}

// pick returns e's thing if its kind is in mask, else nil.
func (s *shadow[T, P]) pick(e *entry, mask KindMask) *T {
	if k := e.kindBits(); k == kindInThing {
		return s.pickByThing(e, mask)
	} else if !mask.Has(k) {
		return nil
	}
	return s.store.at(e.ref())
}

// pickByThing is pick for an entry whose kind is in its thing; apart, so
// that pick, on the path of every free, stays small enough to inline.
func (s *shadow[T, P]) pickByThing(e *entry, mask KindMask) *T {
	if t := s.store.at(e.ref()); mask.Has(headOf(t).Kind()) {
		return t
	}
	return nil
}

// startingAt returns the thing of a kind in mask that starts at a: the
// newest live one, else the newest dead one still remembered.
func (s *shadow[T, P]) startingAt(a uint64, mask KindMask) *T {
	var best *T
	if !s.nested {
		if e, _ := s.entryAt(a); e != nil {
			// pick, written out: too big to inline, and this is on the path
			// of most ops that name a thing.
			if k := e.kindBits(); k == kindInThing {
				return s.pickByThing(e, mask)
			} else if !mask.Has(k) {
				return nil
			}
			return s.store.at(e.ref())
		}
	} else {
		best = s.newest(a, mask, true, func(e *entry) bool { return e.lo == a })
	}
	for _, e := range s.huge {
		if e.lo == a && mask.Has(headOf(e.t).Kind()) && better(headOf(e.t), headOf(best), true) {
			best = e.t
		}
	}
	return best
}

// sameCells reports whether the range [lo, hi) would be kept in the same
// cells as h.
func (s *shadow[T, P]) sameCells(h *hitAt, lo, hi uint64) bool {
	if h.level == nLevels || levelFor(hi-lo) != h.level {
		return false
	}
	f, l := s.cells(h.level, h.lo, h.hi)
	nf, nl := s.cells(h.level, lo, hi)
	return f == nf && l == nl
}

// overlapping appends to out every thing whose range meets [lo, hi), each
// once, and returns out.
func (s *shadow[T, P]) overlapping(lo, hi uint64, out []Hit[T]) []Hit[T] {
	for i := range s.levels {
		lv := &s.levels[i]
		if lv.n == 0 {
			continue
		}
		first, last := lo>>lv.tab.shift, (hi-1)>>lv.tab.shift
		if last-first < 4 {
			for k := first; ; k++ {
				out = s.inCell(uint8(i), k, lo, hi, out)
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
				out = s.inWord(uint8(i), w, lv.occupied[w], lo, hi, first, last, out)
				if w == last/64 {
					break
				}
			}
		} else {
			for w, bits := range lv.occupied {
				if first/64 <= w && w <= last/64 {
					out = s.inWord(uint8(i), w, bits, lo, hi, first, last, out)
				}
			}
		}
	}
	for _, e := range s.huge {
		if e.lo < hi && lo < e.hi {
			h := headOf(e.t)
			out = append(out, Hit[T]{e.t, h.Kind(), h.Dead(), hitAt{e.r, e.lo, e.hi, nLevels}})
		}
	}
	return out
}

// inWord appends the things meeting [lo, hi) in the cells of occupancy
// word w that lie within cells first..last of level l.
func (s *shadow[T, P]) inWord(l uint8, w, bits, lo, hi, first, last uint64, out []Hit[T]) []Hit[T] {
	for bits != 0 {
		k := w*64 + uint64(mathbits.TrailingZeros64(bits))
		bits &= bits - 1
		if first <= k && k <= last {
			out = s.inCell(l, k, lo, hi, out)
		}
	}
	return out
}

// inCell appends the things of cell k of level l that meet [lo, hi) and
// whose first cell in common with the range is k, so that a thing entered
// in several cells is reported once.
func (s *shadow[T, P]) inCell(l uint8, k, lo, hi uint64, out []Hit[T]) []Hit[T] {
	tab := &s.levels[l].tab
	for i := tab.firstBucket(k); i >= 0; i = tab.seekCell(k, i+1) {
		b := &tab.buckets[i]
		n := b.used()
		for j := range n {
			// The three tests are and'ed as numbers, so that the loop
			// has one branch, mostly not taken, instead of three guesses.
			e := &b[j]
			eh := e.hi()
			if less(e.lo, hi)&less(lo, eh)&eq(max(lo, e.lo)>>tab.shift, k) != 0 {
				out = append(out, Hit[T]{s.store.at(e.ref()), s.kind(e), s.isDead(e), hitAt{e.ref(), e.lo, eh, l}})
			}
		}
		if n < bucketLen {
			break // the cell's last bucket
		}
	}
	return out
}

// live appends the things not dead to out, each once, in no order.
func (s *shadow[T, P]) live(out []*T) []*T {
	for i := range s.levels {
		for _, b := range s.levels[i].tab.buckets {
			for _, e := range b {
				if e.meta != 0 && e.part() == 0 && !s.isDead(&e) {
					out = append(out, s.store.at(e.ref()))
				}
			}
		}
	}
	for _, e := range s.huge {
		if !headOf(e.t).Dead() {
			out = append(out, e.t)
		}
	}
	return out
}
