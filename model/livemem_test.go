package model

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/tlcheck/tlcheck/model/internal/index"
	"github.com/tlcheck/tlcheck/traces"
)

// liveMallocs returns n mallocs of 8 to 256 bytes laid out as a heap lays
// them (each chunk rounded up to 16 bytes with a 16-byte header), from 50
// sites, as an mtrace log of a program at its peak would have them.
func liveMallocs(n int) []traces.Event {
	rng := rand.New(rand.NewPCG(5, 6))
	sites := make([]string, 50)
	for i := range sites {
		sites[i] = fmt.Sprintf("./prog:[0x%x]", 0x401000+16*i)
	}
	evs := make([]traces.Event, n)
	a := uint64(0x5555_0000_0000)
	for i := range evs {
		size := 8 + uint64(rng.IntN(249))
		evs[i] = traces.Event{Op: traces.OpMalloc, Addr: traces.Addr(a), Size: size, HasSize: true, Site: sites[rng.IntN(len(sites))]}
		a += (size + 16 + 15) &^ 15
	}
	return evs
}

// BenchmarkLiveBlocks reports the memory a Checker holds for each block
// live at once (B/live-block): n mallocs stepped, none freed, the heap in
// use measured after a collection, less what it was before the Checker
// was made, and the big tables' buckets it holds outside the heap. It is the model's share of an mtrace replay's peak memory;
// the garbage collector's headroom (up to GOGC percent more) comes on top
// in a process's RSS.
func BenchmarkLiveBlocks(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		evs := liveMallocs(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var perBlock float64
			for b.Loop() {
				perBlock = liveBytes(b, evs)
			}
			b.ReportMetric(perBlock, "B/live-block")
		})
	}
}

// liveBytes steps evs into a new Checker and returns the heap in use it
// adds, per event.
func liveBytes(tb testing.TB, evs []traces.Event) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	mappedBefore := index.Mapped()
	c := New(traces.Header{})
	var pos traces.Pos
	for i := range evs {
		if vs, err := c.Step(&evs[i], pos); len(vs) != 0 || err != nil {
			tb.Fatalf("event %d: %v %v", i, vs, err)
		}
		pos.Event++
		pos.Line++
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(c)
	held := int64(after.HeapInuse) - int64(before.HeapInuse) + index.Mapped() - mappedBefore // big tables are off the heap
	return float64(held) / float64(len(evs))
}
