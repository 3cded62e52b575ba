package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestShadowAgainstScan checks the shadow's lookups against a plain scan
// of the same things, over random ranges of every level (huge ones and
// ones at the top of the space included), with and without nesting.
func TestShadowAgainstScan(t *testing.T) {
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var sp shadow
		sp.init(new(store))
		var all []*thing
		refs := map[*thing]ref{}
		id := 0
		disjoint := seed%2 == 0 // keep things apart, as a correct allocator does
		hits := 0
		randAddr := func() uint64 {
			switch rng.IntN(10) {
			case 0:
				return math.MaxUint64 - rng.Uint64N(1<<12)
			case 1:
				return rng.Uint64N(1 << 40)
			}
			return rng.Uint64N(1 << 22)
		}
		randSize := func() uint64 {
			return max(uint64(1)<<rng.UintN(34)>>rng.UintN(8), 1) // 1 B .. 16 GiB, mostly small
		}
		for range 3000 {
			switch r := rng.IntN(10); {
			case r < 5 || len(all) == 0:
				id++
				lo := randAddr()
				hi := lo + randSize()
				if hi < lo {
					hi = math.MaxUint64
				}
				th, r := sp.store.add(kind(rng.IntN(5)))
				th.lo, th.size = lo, hi-lo
				th.setID(id)
				if rng.IntN(3) == 0 {
					th.died = 1 // dead at event 0
				}
				meets := false
				for _, o := range all {
					meets = meets || o.lo < hi && lo < o.hi()
				}
				if meets && disjoint {
					continue
				}
				sp.nested = sp.nested || meets
				sp.insert(th, r)
				refs[th] = r
				all = append(all, th)
			case r < 7:
				i := rng.IntN(len(all))
				o := all[i]
				sp.remove(refs[o], o.lo, o.hi(), levelFor(o.hi()-o.lo))
				all = slices.Delete(all, i, i+1)
			default:
				a := randAddr()
				if rng.IntN(2) == 0 && len(all) > 0 {
					a = all[rng.IntN(len(all))].lo + rng.Uint64N(8)
				}
				mask := kindMask(rng.IntN(32)) | 1<<kind(rng.IntN(5))
				if scanContaining(all, a, anyKind) != nil {
					hits++
				}
				if got, want := sp.containing(a, mask), scanContaining(all, a, mask); got != want {
					t.Fatalf("seed %d: containing(%#x, %b) = %v, want %v", seed, a, mask, got, want)
				}
				if got, want := sp.startingAt(a, mask), scanStartingAt(all, a, mask); got != want {
					t.Fatalf("seed %d: startingAt(%#x, %b) = %v, want %v", seed, a, mask, got, want)
				}
				lo, hi := a, a+randSize()
				if hi < lo {
					hi = math.MaxUint64
				}
				var got []*thing
				for _, h := range sp.overlapping(lo, hi, nil) {
					got = append(got, sp.store.at(h.ref))
				}
				var want []*thing
				for _, o := range all {
					if o.lo < hi && lo < o.hi() {
						want = append(want, o)
					}
				}
				byID := func(a, b *thing) int { return a.id() - b.id() }
				slices.SortFunc(got, byID)
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d: overlapping(%#x, %#x) = %d things, want %d", seed, lo, hi, len(got), len(want))
				}
			}
		}
		if hits < 100 || sp.nested == disjoint {
			t.Fatalf("seed %d: %d lookups hit, nested = %t; the test did not cover what it meant to", seed, hits, sp.nested)
		}
		if n, _ := sp.size(); n != len(all) {
			t.Fatalf("seed %d: shadow keeps %d things, want %d", seed, n, len(all))
		}
	}
}

func scanContaining(all []*thing, a uint64, mask kindMask) *thing {
	var best *thing
	for _, o := range all {
		if o.lo <= a && a < o.hi() && o.kind().mask()&mask != 0 && better(o, best, false) {
			best = o
		}
	}
	return best
}

func scanStartingAt(all []*thing, a uint64, mask kindMask) *thing {
	var best *thing
	for _, o := range all {
		if o.lo == a && o.kind().mask()&mask != 0 && better(o, best, true) {
			best = o
		}
	}
	return best
}
