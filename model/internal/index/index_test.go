package index

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Both indexes keep the contract.
var (
	_ Interface[testThing] = (*Tuned[testThing, *testThing])(nil)
	_ Interface[testThing] = (*Naive[testThing, *testThing])(nil)
)

// twin is one index and the things it made, by id.
type twin struct {
	x    Interface[testThing]
	byID map[int]*testThing
}

// TestTunedAgainstNaive drives the tuned and the naive index side by side
// with the same random makes, deaths and queries, used as the model uses
// them (TryReuse, else Overlapping then Place; deaths through KillLiveAt
// or Died), and holds every answer of the tuned one to the naive one's, by
// id. Addresses crowd a few cells, so that things die and are reused in
// place, nest, cross cells and levels; some lie at the top of the space,
// some are too big for every level, and kinds go past the entries' bits.
// Both are Reset twice on the way, at random steps, and must go on
// agreeing: a reset index, with the memory it kept, is a new one.
func TestTunedAgainstNaive(t *testing.T) {
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 77))
		cfg := testConfig()
		tuned := &twin{NewTuned[testThing](cfg), map[int]*testThing{}}
		naive := &twin{NewNaive[testThing](cfg), map[int]*testThing{}}
		var live []int // ids of things not dead
		spaceOf := map[int]Space{}
		id, reused, fast, nested := 0, 0, 0, 0
		// Half the seeds keep live things apart, as a correct allocator
		// does, on a few addresses, so that the fast paths are taken; the
		// others let things nest.
		disjoint := seed%2 == 0
		addr := func() uint64 {
			switch r := rng.IntN(20); {
			case r == 0:
				return math.MaxUint64 - rng.Uint64N(1<<12)
			case r == 1:
				return rng.Uint64N(1 << 40)
			case r < 12:
				return 0x10000 + 0x40*rng.Uint64N(24)
			}
			return rng.Uint64N(1 << 22)
		}
		size := func() uint64 {
			if disjoint || rng.IntN(4) == 0 {
				return 1 + rng.Uint64N(0x80) // up to two grid steps: into the next thing
			}
			return uint64(1) << rng.UintN(34) >> rng.UintN(8) // 1 B .. 16 GiB, mostly small
		}
		resetAt := []int{500 + rng.IntN(1000), 1500 + rng.IntN(1000)}
		for step := range 3000 {
			where := fmt.Sprintf("seed %d step %d", seed, step)
			if slices.Contains(resetAt, step) {
				for _, tw := range []*twin{tuned, naive} {
					tw.x.Reset()
					clear(tw.byID)
					for sp := range Space(2) {
						if things, cells := tw.x.Size(sp); things != 0 || cells != 0 {
							t.Fatalf("%s: reset, space %d keeps %d things in %d cells", where, sp, things, cells)
						}
						if l := tw.x.Live(sp, nil); len(l) != 0 {
							t.Fatalf("%s: reset, space %d has %d live things", where, sp, len(l))
						}
					}
					if p := tw.x.Pinned(nil); len(p) != 0 {
						t.Fatalf("%s: reset, the index has %d pinned things", where, len(p))
					}
				}
				live, id = live[:0], 0
				clear(spaceOf)
			}
			sp := Space(rng.IntN(2))
			switch r := rng.IntN(10); {
			case r < 4: // make
				k := Kind(rng.IntN(10))
				if rng.IntN(2) == 0 {
					k = Kind(rng.IntN(2)) // the lean and the pinned kind, most often
				}
				lo, hi := Span(addr(), size())
				sz := hi - lo
				if hi == math.MaxUint64 {
					sz = rng.Uint64N(1 << 20) // clamped at the top: size is not length
				}
				want := naive.x.Overlapping(sp, lo, hi, nil)
				sameHits(t, where+" overlapping before make", tuned.x.Overlapping(sp, lo, hi, nil), want)
				if disjoint && slices.ContainsFunc(want, func(h Hit[testThing]) bool { return !h.Dead }) {
					break
				}
				id++
				nt := naive.x.Place(sp, k, lo, hi, sz, want)
				tt := tuned.x.TryReuse(sp, k, lo, hi, sz)
				if tt != nil {
					reused++
					if len(want) != 1 || !want[0].Dead || want[0].Kind != k {
						t.Fatalf("%s: TryReuse of kind %d over [%#x, %#x) took a dead thing's place, but the range meets %v", where, k, lo, hi, ids(want))
					}
				} else {
					tt = tuned.x.Place(sp, k, lo, hi, sz, tuned.x.Overlapping(sp, lo, hi, nil))
				}
				for _, h := range want {
					if !h.Dead {
						nested++
					}
				}
				for _, tw := range []struct {
					tw *twin
					t  *testThing
				}{{naive, nt}, {tuned, tt}} {
					if h := tw.t.Head; h.Lo != lo || h.Size != sz || h.Kind() != k || h.ID() != 0 || h.Died != 0 {
						t.Fatalf("%s: a new thing's head is %+v", where, h)
					}
					if cfg.Pinned.Has(k) != (tw.t.data != nil) {
						t.Fatalf("%s: a new thing of kind %d has data %v", where, k, tw.t.data)
					}
					tw.t.SetID(id)
					tw.tw.byID[id] = tw.t
				}
				live = append(live, id)
				spaceOf[id] = sp
			case r < 6 && len(live) > 0: // kill
				i := rng.IntN(len(live))
				nt, tt := naive.byID[live[i]], tuned.byID[live[i]]
				sp := spaceOf[live[i]]
				mask := KindMask(3) // the lean and the pinned kind, as a free names them
				got, size, killed := tuned.x.KillLiveAt(sp, tt.Lo, tt.Kind(), mask)
				if !killed {
					// Declining, it answers as StartingAt.
					sameThing(t, where, fmt.Sprintf("KillLiveAt(%d, %#x, %d, %b)", sp, tt.Lo, tt.Kind(), mask),
						got, naive.x.StartingAt(sp, tt.Lo, mask))
				} else {
					// KillLiveAt may only take the one thing that starts there.
					if n := naive.x.StartingAt(sp, tt.Lo, ^KindMask(0)); got.ID() != n.ID() || got.Dead() || size != n.Size {
						t.Fatalf("%s: KillLiveAt(%#x, %d) = #%d of %d bytes, but the newest there is #%d", where, tt.Lo, tt.Kind(), got.ID(), size, n.ID())
					}
					fast++
					got.Died = 1
					ntk := naive.byID[got.ID()]
					ntk.Died = 1
					naive.x.Died(sp, ntk)
					live = slices.DeleteFunc(live, func(id int) bool { return id == got.ID() })
					break
				}
				due := nt.Kind() == 1 && rng.IntN(3) == 0 // due: neither live nor dead
				for _, th := range []*testThing{nt, tt} {
					th.Died = 1
					if due {
						th.Died = -1
					}
				}
				naive.x.Died(sp, nt)
				tuned.x.Died(sp, tt)
				live = slices.Delete(live, i, i+1)
			default: // queries
				a := addr()
				if rng.IntN(2) == 0 && len(live) > 0 {
					a = naive.byID[live[rng.IntN(len(live))]].Lo + rng.Uint64N(8)
				}
				mask := KindMask(rng.IntN(1024)) | 1<<Kind(rng.IntN(10))
				sameThing(t, where, fmt.Sprintf("StartingAt(%d, %#x, %b)", sp, a, mask),
					tuned.x.StartingAt(sp, a, mask), naive.x.StartingAt(sp, a, mask))
				sameThing(t, where, fmt.Sprintf("Containing(%d, %#x, %b)", sp, a, mask),
					tuned.x.Containing(sp, a, mask), naive.x.Containing(sp, a, mask))
				lo, hi := Span(a, size())
				sameHits(t, where+fmt.Sprintf(" Overlapping(%d, %#x, %#x)", sp, lo, hi),
					tuned.x.Overlapping(sp, lo, hi, nil), naive.x.Overlapping(sp, lo, hi, nil))
			}
			if step%100 == 0 {
				for sp := range Space(2) {
					sameIDs(t, where+" Live", tuned.x.Live(sp, nil), naive.x.Live(sp, nil))
					tn, _ := tuned.x.Size(sp)
					nn, _ := naive.x.Size(sp)
					if tn != nn {
						t.Fatalf("%s: space %d: the tuned index remembers %d things, the naive one %d", where, sp, tn, nn)
					}
				}
				sameIDs(t, where+" Pinned", tuned.x.Pinned(nil), naive.x.Pinned(nil))
				for _, tw := range []*twin{tuned, naive} {
					if err := tw.x.Check(); err != nil {
						t.Fatalf("%s: %v", where, err)
					}
				}
			}
		}
		if disjoint && (reused < 5 || fast < 20) || !disjoint && nested < 20 {
			t.Fatalf("seed %d: %d makes reused a dead thing's place, %d frees took the fast path, %d makes nested; the test did not cover what it meant to", seed, reused, fast, nested)
		}
	}
}

func ids(hs []Hit[testThing]) []string {
	var s []string
	for _, h := range hs {
		s = append(s, fmt.Sprintf("#%d(kind %d, dead %t)", h.Thing.ID(), h.Kind, h.Dead))
	}
	slices.Sort(s)
	return s
}

func sameHits(t *testing.T, where string, got, want []Hit[testThing]) {
	t.Helper()
	if g, w := ids(got), ids(want); !slices.Equal(g, w) {
		t.Fatalf("%s: the tuned index finds %v, the naive one %v", where, g, w)
	}
}

func sameThing(t *testing.T, where, query string, got, want *testThing) {
	t.Helper()
	if (got == nil) != (want == nil) || got != nil && got.ID() != want.ID() {
		t.Fatalf("%s: %s: the tuned index answers %v, the naive one %v", where, query, got, want)
	}
}

func sameIDs(t *testing.T, where string, got, want []*testThing) {
	t.Helper()
	g := make([]int, 0, len(got))
	for _, th := range got {
		g = append(g, th.ID())
	}
	w := make([]int, 0, len(want))
	for _, th := range want {
		w = append(w, th.ID())
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Fatalf("%s: the tuned index lists %v, the naive one %v", where, g, w)
	}
}
