//go:build !naiveindex

package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/model/internal/index"
	"github.com/tlcheck/tlcheck/traces"
)

// TestReusableAgreesWithOverlapping checks make's fast path against its
// general one in the tuned index (the naive one has no fast path): before
// every allocation, whenever the index says the new
// range can take a dead thing's place, the range query must find that
// thing and nothing else. Traces are allocator-like (chunks reused for
// blocks of other sizes, across cells and levels) and random (overlaps,
// nesting, every op).
func TestReusableAgreesWithOverlapping(t *testing.T) {
	traceOf := map[string][]traces.Event{
		"malloc-like": cycle(false, 512, 40_000, (*gen).mallocLike),
		"heap":        cycle(false, 64, 20_000, (*gen).heapStep),
		"mixed":       cycle(false, 64, 20_000, (*gen).heapStep, (*gen).arenaPoolStep),
		"random":      randomTrace(20_000),
	}
	for name, evs := range traceOf {
		t.Run(name, func(t *testing.T) {
			c := New(traces.Header{})
			reused := 0
			for i := range evs {
				ev := &evs[i]
				if k, a, size, ok := allocation(ev); ok && a != 0 {
					sp := k.row().space.index()
					lo, hi := span(a, size)
					if old := c.mem.ix.Reusable(sp, index.Kind(k), lo, hi); old != nil {
						reused++
						hits := c.mem.ix.Overlapping(sp, lo, hi, nil)
						if len(hits) != 1 || hits[0].Thing != old || !hits[0].Dead || kind(hits[0].Kind) != k {
							t.Fatalf("event %d (%v at %#x, %d bytes): reusable names %v, but the range meets %+v", i, ev.Op, lo, size, old, hits)
						}
					}
				}
				if _, err := c.Step(ev, traces.Pos{Event: i}); err != nil {
					t.Fatal(err)
				}
			}
			if name == "malloc-like" && reused < len(evs)/8 {
				t.Errorf("only %d of %d events took the fast path; the test did not cover it", reused, len(evs))
			}
		})
	}
}

// allocation returns what an event allocates, if it allocates.
func allocation(ev *traces.Event) (kind, traces.Addr, uint64, bool) {
	switch ev.Op {
	case traces.OpMalloc:
		return kBlock, ev.Addr, ev.Size, true
	case traces.OpRealloc:
		return kBlock, ev.NewAddr, ev.Size, true // its free half comes first, but frees never make a range reusable
	case traces.OpArenaGet:
		return kArena, ev.Addr, ev.Size, true
	case traces.OpDevMalloc:
		return kSegment, ev.Addr, ev.Size, true
	case traces.OpPoolGet:
		return kPool, ev.Addr, ev.Size, true
	}
	return 0, 0, 0, false
}

// randomTrace is layer-1 and layer-3/4 events at a few addresses, with
// sizes that make ranges overlap, nest and cross cells.
func randomTrace(n int) []traces.Event {
	rng := rand.New(rand.NewPCG(9, 10))
	ops := []traces.Op{traces.OpMalloc, traces.OpMalloc, traces.OpFree, traces.OpFree, traces.OpRealloc,
		traces.OpWrite, traces.OpFnEnter, traces.OpArenaGet, traces.OpFnExit, traces.OpDevMalloc,
		traces.OpPoolGet, traces.OpPoolPut, traces.OpDevFree}
	addr := func() traces.Addr { return traces.Addr(0x10000 + 0x100*rng.IntN(16) + 8*rng.IntN(3)) }
	evs := make([]traces.Event, 0, n)
	for i := range n {
		ev := traces.Event{Op: ops[rng.IntN(len(ops))], Addr: addr(), NewAddr: addr(),
			Size: uint64(rng.IntN(1 << rng.IntN(12))), Slots: 2, Slot: rng.IntN(2), Site: fmt.Sprint("r:", i%7)}
		evs = append(evs, ev)
	}
	return evs
}
