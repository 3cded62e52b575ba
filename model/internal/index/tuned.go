package index

import "fmt"

// Tuned is the index tuned for speed: a shadow memory per space (see
// shadow) over a store of things that recycles their memory (see store).
// It answers most of a heap log's events from its entries alone, without
// reading a thing.
type Tuned[T any, P Thing[T]] struct {
	store  store[T, P]
	spaces []shadow[T, P]
}

// NewTuned returns an empty tuned index.
func NewTuned[T any, P Thing[T]](cfg Config[T]) *Tuned[T, P] {
	checkConfig(cfg)
	checkHeadFirst[T, P]()
	x := &Tuned[T, P]{spaces: make([]shadow[T, P], cfg.Spaces)}
	x.store.lean, x.store.pin, x.store.newPinned = cfg.Lean, cfg.Pinned, cfg.NewPinned
	for i := range x.spaces {
		x.spaces[i].init(&x.store)
	}
	return x
}

// checkConfig panics on a Config no index can keep.
func checkConfig[T any](cfg Config[T]) {
	switch {
	case cfg.Spaces < 1 || cfg.Spaces > 256:
		panic(fmt.Sprintf("index: %d spaces", cfg.Spaces))
	case cfg.Lean>>kindInThing != 0:
		panic(fmt.Sprintf("index: lean kinds %b: only the first %d kinds can be lean", cfg.Lean, kindInThing))
	case cfg.Lean&cfg.Pinned != 0:
		panic(fmt.Sprintf("index: kinds %b both lean and pinned", cfg.Lean&cfg.Pinned))
	case cfg.Pinned != 0 && cfg.NewPinned == nil:
		panic("index: pinned kinds and no NewPinned")
	}
}

func (x *Tuned[T, P]) StartingAt(sp Space, a uint64, mask KindMask) *T {
	return x.spaces[sp].startingAt(a, mask)
}

func (x *Tuned[T, P]) Containing(sp Space, a uint64, mask KindMask) *T {
	return x.spaces[sp].containing(a, mask)
}

func (x *Tuned[T, P]) Overlapping(sp Space, lo, hi uint64, out []Hit[T]) []Hit[T] {
	return x.spaces[sp].overlapping(lo, hi, out)
}

func (x *Tuned[T, P]) Live(sp Space, out []*T) []*T { return x.spaces[sp].live(out) }

func (x *Tuned[T, P]) Pinned(out []*T) []*T {
	for _, t := range x.store.pinned {
		if t != nil {
			out = append(out, t)
		}
	}
	return out
}

// TryReuse is Place's fast path (see shadow.reusable): the new thing takes
// the place of a dead one that starts where it does, in the store and in
// the shadow; a new pinned thing takes only the dead one's entries, since
// the rules may name a pinned thing after it is forgotten.
func (x *Tuned[T, P]) TryReuse(sp Space, k Kind, lo, hi, size uint64) *T {
	s := &x.spaces[sp]
	e, l := s.reusable(k, lo, hi)
	if e == nil {
		return nil
	}
	old := e.ref()
	var t *T
	r := old
	if x.store.pin.Has(k) {
		t, r = x.store.add(k, lo, size)
		x.store.forget(old, k)
	} else {
		t = x.store.renew(old, k, lo, size)
	}
	if first, last := s.cells(l, lo, hi); first == last {
		*e = newEntry(r, k, lo, hi, size, false, 0)
	} else {
		s.reshape(t, old, r, l)
	}
	return t
}

func (x *Tuned[T, P]) Place(sp Space, k Kind, lo, hi, size uint64, found []Hit[T]) *T {
	s := &x.spaces[sp]
	var t *T
	for i := range found {
		h := &found[i]
		switch {
		case !h.Dead:
			s.nested = true
		case t == nil && h.Kind == k && !x.store.pin.Has(k) && s.sameCells(&h.at, lo, hi):
			t = x.store.renew(h.at.ref, k, lo, size)
			s.reshape(t, h.at.ref, h.at.ref, h.at.level)
		default:
			s.remove(h.at.ref, h.at.lo, h.at.hi, h.at.level) // its range is taken: forget it
			x.store.forget(h.at.ref, h.Kind)
		}
	}
	if t == nil {
		var r ref
		t, r = x.store.add(k, lo, size)
		s.insert(t, r)
	}
	return t
}

// KillLiveAt decides a free from entries alone where it can, and declines
// where it cannot (things nest); declining, it answers StartingAt from the
// entry it found, so that a free looks once.
func (x *Tuned[T, P]) KillLiveAt(sp Space, a uint64, k Kind, mask KindMask) (*T, uint64, bool) {
	s := &x.spaces[sp]
	e, _ := s.entryAt(a)
	if e == nil {
		return s.startingAt(a, mask), 0, false
	}
	if e.kindBits() != k || e.dead() || !x.store.lean.Has(k) {
		// e is the one thing that starts at a, as startingAt would find.
		return s.pick(e, mask), 0, false
	}
	e.meta |= metaDead
	t := x.store.at(e.ref())
	size := e.len()
	if e.meta&metaInexact != 0 {
		size = headOf(t).Size
	}
	return t, size, true
}

func (x *Tuned[T, P]) Died(sp Space, t *T) {
	if x.store.lean.Has(headOf(t).Kind()) { // the others' deaths are read from the thing
		x.spaces[sp].markDead(t)
	}
}

// Reset forgets every thing (see the package comment), keeping the first
// chunk of the store and the shadows' small tables, emptied: a checker
// reused for trace after trace allocates them once.
func (x *Tuned[T, P]) Reset() {
	x.store.reset()
	for i := range x.spaces {
		x.spaces[i].reset()
	}
}

func (x *Tuned[T, P]) Size(sp Space) (things, cells int) { return x.spaces[sp].size() }

// Check holds every entry to the thing it stands for.
func (x *Tuned[T, P]) Check() error {
	for i := range x.spaces {
		s := &x.spaces[i]
		for l := range s.levels {
			for _, b := range s.levels[l].tab.buckets {
				for _, e := range b {
					if e.meta == 0 {
						continue
					}
					h := headOf(s.store.at(e.ref()))
					exact := s.store.lean.Has(e.kindBits()) && e.part() == 0
					if s.kind(&e) != h.Kind() || e.lo != h.Lo || e.hi() != h.Hi() ||
						e.dead() && !h.Dead() || exact && e.dead() != h.Dead() {
						return fmt.Errorf("space %d: entry at %#x (part %d, dead %t) stands for thing #%d of kind %d over [%#x, %#x), dead %t",
							i, e.lo, e.part(), e.dead(), h.ID(), h.Kind(), h.Lo, h.Hi(), h.Dead())
					}
				}
			}
		}
	}
	return nil
}

// Reusable returns the dead thing TryReuse would take the place of, or
// nil, changing nothing: for tests that hold TryReuse to Place.
func (x *Tuned[T, P]) Reusable(sp Space, k Kind, lo, hi uint64) *T {
	if e, _ := x.spaces[sp].reusable(k, lo, hi); e != nil {
		return x.store.at(e.ref())
	}
	return nil
}
