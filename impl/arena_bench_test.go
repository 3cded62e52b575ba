package impl_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/impl"
)

// benchSlots is how many tensors a benchmarked frame hands out.
const benchSlots = 32

var sink [benchSlots][]byte

// BenchmarkArenaGet measures a frame's tensors against Go's allocator:
// each iteration enters a frame, asks every one of benchSlots slots for a
// buffer of the size, and exits (the arena's whole cost per tensor, bump
// and release included), then makes as many slices with make([]byte, n),
// which escape, timing both halves in the same iteration so that both see
// the same machine. It reports ns per tensor for each and their ratio,
// arena/make.
func BenchmarkArenaGet(b *testing.B) {
	for _, size := range []uint64{64, 4096} {
		b.Run("size="+strconv.FormatUint(size, 10), func(b *testing.B) {
			rt := impl.New(impl.Config{})
			var arena, mk time.Duration
			for b.Loop() {
				start := time.Now()
				_ = rt.FnEnter(benchSlots)
				for s := range benchSlots {
					_, _ = rt.ArenaGet(s, size, "")
				}
				_ = rt.FnExit()
				mid := time.Now()
				for s := range benchSlots {
					sink[s] = make([]byte, size)
				}
				mk += time.Since(mid)
				arena += mid.Sub(start)
			}
			tensors := float64(b.N) * benchSlots
			b.ReportMetric(float64(arena.Nanoseconds())/tensors, "arena-ns/tensor")
			b.ReportMetric(float64(mk.Nanoseconds())/tensors, "make-ns/tensor")
			b.ReportMetric(arena.Seconds()/mk.Seconds(), "arena/make")
		})
	}
}

// BenchmarkFrame measures a frame's enter and exit, with no tensor: the
// cost every call of a compiled function pays. ns/op is the pair.
func BenchmarkFrame(b *testing.B) {
	rt := impl.New(impl.Config{})
	b.ReportAllocs()
	for b.Loop() {
		_ = rt.FnEnter(8)
		_ = rt.FnExit()
	}
}

// BenchmarkPlanFrame measures the planner on functions of n variables
// with random lifetimes (up to 16 statements each, over n statements). Its
// ns/(n·log2 n) stays flat as n grows tenfold, twice: the plan is
// O(n log n).
func BenchmarkPlanFrame(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(uint64(n), 1))
			vars := make([]impl.Interval, n)
			for i := range vars {
				first := r.IntN(n)
				vars[i] = impl.Interval{First: first, Last: first + r.IntN(16)}
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := impl.PlanFrame(vars); err != nil {
					b.Fatal(err)
				}
			}
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(per/float64(n), "ns/var")
			b.ReportMetric(per/(float64(n)*math.Log2(float64(n))), "ns/(n·log2n)")
		})
	}
}
