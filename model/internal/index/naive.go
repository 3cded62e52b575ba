package index

import "fmt"

// Naive is the plain index: a slice of the things each space remembers,
// in the order made, scanned by every query. It is slow, and obviously
// what the contract says; the tuned index is held to it (see the package
// comment). It recycles nothing and takes no fast path.
type Naive[T any, P Thing[T]] struct {
	spaces [][]*T
	cfg    Config[T]
}

// NewNaive returns an empty naive index.
func NewNaive[T any, P Thing[T]](cfg Config[T]) *Naive[T, P] {
	checkConfig(cfg)
	return &Naive[T, P]{spaces: make([][]*T, cfg.Spaces), cfg: cfg}
}

func (x *Naive[T, P]) StartingAt(sp Space, a uint64, mask KindMask) *T {
	var best *T
	for _, t := range x.spaces[sp] {
		if h := P(t).Indexed(); h.Lo == a && mask.Has(h.Kind()) && better(h, headOr[T, P](best), true) {
			best = t
		}
	}
	return best
}

func (x *Naive[T, P]) Containing(sp Space, a uint64, mask KindMask) *T {
	var best *T
	for _, t := range x.spaces[sp] {
		if h := P(t).Indexed(); h.Lo <= a && a < h.Hi() && mask.Has(h.Kind()) && better(h, headOr[T, P](best), false) {
			best = t
		}
	}
	return best
}

func (x *Naive[T, P]) Overlapping(sp Space, lo, hi uint64, out []Hit[T]) []Hit[T] {
	for _, t := range x.spaces[sp] {
		if h := P(t).Indexed(); h.Lo < hi && lo < h.Hi() {
			out = append(out, Hit[T]{Thing: t, Kind: h.Kind(), Dead: h.Dead()})
		}
	}
	return out
}

// headOr is t's Head, or nil for no thing.
func headOr[T any, P Thing[T]](t *T) *Head {
	if t == nil {
		return nil
	}
	return P(t).Indexed()
}

// TryReuse always declines: Place does the work.
func (x *Naive[T, P]) TryReuse(sp Space, k Kind, lo, hi, size uint64) *T { return nil }

func (x *Naive[T, P]) Place(sp Space, k Kind, lo, hi, size uint64, found []Hit[T]) *T {
	for _, h := range found {
		if h.Dead {
			x.forget(sp, h.Thing)
		}
	}
	var t *T
	if x.cfg.Pinned.Has(k) {
		t = x.cfg.NewPinned()
	} else {
		t = new(T)
		P(t).Renew(k)
	}
	setHead(P(t).Indexed(), k, lo, size)
	x.spaces[sp] = append(x.spaces[sp], t)
	return t
}

// forget drops t from space sp.
func (x *Naive[T, P]) forget(sp Space, t *T) {
	ts := x.spaces[sp]
	for i := range ts {
		if ts[i] == t {
			x.spaces[sp] = append(ts[:i], ts[i+1:]...)
			ts[len(ts)-1] = nil
			return
		}
	}
	panic("index: Place was given a thing the index does not remember")
}

// KillLiveAt always declines, and answers as StartingAt.
func (x *Naive[T, P]) KillLiveAt(sp Space, a uint64, k Kind, mask KindMask) (*T, uint64, bool) {
	return x.StartingAt(sp, a, mask), 0, false
}

// Died needs nothing: the naive index reads deaths from the things.
func (x *Naive[T, P]) Died(sp Space, t *T) {}

func (x *Naive[T, P]) Live(sp Space, out []*T) []*T {
	for _, t := range x.spaces[sp] {
		if !P(t).Indexed().Dead() {
			out = append(out, t)
		}
	}
	return out
}

func (x *Naive[T, P]) Pinned(out []*T) []*T {
	for _, ts := range x.spaces {
		for _, t := range ts {
			if x.cfg.Pinned.Has(P(t).Indexed().Kind()) {
				out = append(out, t)
			}
		}
	}
	return out
}

// Reset forgets every thing, keeping the spaces' arrays.
func (x *Naive[T, P]) Reset() {
	for i := range x.spaces {
		clear(x.spaces[i])
		x.spaces[i] = x.spaces[i][:0]
	}
}

// Size counts a cell per thing: the naive index has no others.
func (x *Naive[T, P]) Size(sp Space) (things, cells int) {
	return len(x.spaces[sp]), len(x.spaces[sp])
}

// Check holds each space to the order things were made in: a thing is
// numbered after Place returns it, so ids rise along the slice (the last
// may still be 0).
func (x *Naive[T, P]) Check() error {
	for sp, ts := range x.spaces {
		for i := 1; i < len(ts); i++ {
			if a, b := P(ts[i-1]).Indexed().ID(), P(ts[i]).Indexed().ID(); a >= b && b != 0 {
				return fmt.Errorf("space %d: thing #%d remembered after #%d", sp, b, a)
			}
		}
	}
	return nil
}
