package index

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
		var sp shadow[testThing, *testThing]
		sp.init(newTestStore())
		var all []*testThing
		refs := map[*testThing]ref{}
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
				th, r := sp.store.add(Kind(rng.IntN(10)), lo, hi-lo) // kinds past the entries' bits too
				th.SetID(id)
				if rng.IntN(3) == 0 {
					th.Died = 1 // dead at event 0
				}
				meets := false
				for _, o := range all {
					meets = meets || o.Lo < hi && lo < o.Hi()
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
				sp.remove(refs[o], o.Lo, o.Hi(), levelFor(o.Hi()-o.Lo))
				all = slices.Delete(all, i, i+1)
			default:
				a := randAddr()
				if rng.IntN(2) == 0 && len(all) > 0 {
					a = all[rng.IntN(len(all))].Lo + rng.Uint64N(8)
				}
				mask := KindMask(rng.IntN(1024)) | 1<<Kind(rng.IntN(10))
				if scanContaining(all, a, ^KindMask(0)) != nil {
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
				var got []*testThing
				for _, h := range sp.overlapping(lo, hi, nil) {
					if h.Thing != sp.store.at(h.at.ref) || h.Kind != h.Thing.Kind() || h.Dead != h.Thing.Dead() {
						t.Fatalf("seed %d: overlapping(%#x, %#x) found %+v, which is not what its thing says", seed, lo, hi, h)
					}
					got = append(got, h.Thing)
				}
				var want []*testThing
				for _, o := range all {
					if o.Lo < hi && lo < o.Hi() {
						want = append(want, o)
					}
				}
				byID := func(a, b *testThing) int { return a.ID() - b.ID() }
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

func scanContaining(all []*testThing, a uint64, mask KindMask) *testThing {
	var best *testThing
	for _, o := range all {
		if o.Lo <= a && a < o.Hi() && mask.Has(o.Kind()) && better(&o.Head, headOf(best), false) {
			best = o
		}
	}
	return best
}

func scanStartingAt(all []*testThing, a uint64, mask KindMask) *testThing {
	var best *testThing
	for _, o := range all {
		if o.Lo == a && mask.Has(o.Kind()) && better(&o.Head, headOf(best), true) {
			best = o
		}
	}
	return best
}
