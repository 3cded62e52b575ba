package model

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/model/internal/index"
	"github.com/tlcheck/tlcheck/traces"
)

// cycle generates a clean trace that leaves nothing live, so it can be
// replayed over and over into one Checker.
func cycle(effects bool, slots, events int, steps ...func(*gen)) []traces.Event {
	g := &gen{effects: effects, rng: rand.New(rand.NewPCG(3, 4)), slots: slots}
	for g.pos.Event < events {
		steps[g.rng.IntN(len(steps))](g)
	}
	for _, a := range g.live {
		if a != 0 {
			g.step(traces.Event{Op: traces.OpFree, Addr: a})
		}
	}
	return g.rec
}

// BenchmarkStep measures Step on generated traces, one op per event, and
// beside them a plain map insert and delete per event of the malloc/free
// trace: the least a checker keyed by address could cost. The malloc/free
// case reports its time as a ratio to that baseline, run in the same
// process over the same events (x-map), and the heap the Checker holds per
// thing it remembers (B/thing), its tables' buckets held outside the Go
// heap included.
func BenchmarkStep(b *testing.B) {
	cases := []struct {
		name    string
		effects bool
		evs     []traces.Event
	}{
		{"mixed", false, cycle(false, 256, 1<<16, (*gen).heapStep, (*gen).objectStep, (*gen).arenaPoolStep)},
		{"malloc-free", false, cycle(false, 1<<16, 1<<20, (*gen).mallocLike)},
		{"objects-effects", true, cycle(true, 256, 1<<16, (*gen).objectStep)},
	}
	for _, tr := range cases {
		b.Run(tr.name, func(b *testing.B) {
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			mappedBefore := index.Mapped()
			c := New(traces.Header{Effects: tr.effects})
			b.ReportAllocs()
			var pos traces.Pos
			for i := 0; b.Loop(); i++ {
				ev := &tr.evs[i%len(tr.evs)]
				if vs, err := c.Step(ev, pos); len(vs) != 0 || err != nil {
					b.Fatalf("event %d: %v %v", i, vs, err)
				}
				pos.Event++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if tr.name == "malloc-free" {
				b.ReportMetric(float64(b.Elapsed())/float64(mapBaseline(tr.evs, b.N)), "x-map")
				var after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&after)
				things, _ := c.mem.ix.Size(heapSpace.index())
				held := int64(after.HeapAlloc) - int64(before.HeapAlloc) + index.Mapped() - mappedBefore // big tables are off the heap
				b.ReportMetric(float64(held)/float64(things), "B/thing")
				runtime.KeepAlive(c)
			}
		})
	}
	b.Run("baseline-map", func(b *testing.B) {
		evs := cases[1].evs
		m := make(map[uint64]uint64)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			mapStep(m, &evs[i%len(evs)])
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
}

// mapBaseline times n events of evs through mapStep.
func mapBaseline(evs []traces.Event, n int) time.Duration {
	m := make(map[uint64]uint64)
	start := time.Now()
	for i := range n {
		mapStep(m, &evs[i%len(evs)])
	}
	return time.Since(start)
}

// mapStep keeps a map from address to size: the baseline's work per event.
func mapStep(m map[uint64]uint64, ev *traces.Event) {
	switch ev.Op {
	case traces.OpMalloc:
		m[uint64(ev.Addr)] = ev.Size
	case traces.OpFree:
		delete(m, uint64(ev.Addr))
	default:
		_ = m[uint64(ev.Addr)]
	}
}
