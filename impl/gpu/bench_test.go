package gpu_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
)

// A training-like workload: the same shapes every step. Parameters are
// allocated once; each step allocates its activations and gradients in
// forward order and frees them in backward order.
var (
	paramSizes = []uint64{4 << 20, 4 << 20, 16 << 20, 1 << 10, 1 << 10, 256 << 10}
	stepSizes  = []uint64{
		12 << 20, 12 << 20, 3 << 20, 3 << 20, 700 << 10, 64 << 10, 4096, 4096, 100, // activations
		4 << 20, 4 << 20, 16 << 20, 1 << 10, 1 << 10, 256 << 10, // gradients
	}
)

const warmSteps = 2

// params allocates the parameters, which live for the whole run.
func params(alloc func(uint64) traces.Addr) {
	for _, n := range paramSizes {
		alloc(n)
	}
}

// trainingSteps runs steps steps on alloc and free.
func trainingSteps(steps int, alloc func(uint64) traces.Addr, free func(traces.Addr)) {
	live := make([]traces.Addr, len(stepSizes))
	for range steps {
		for i, n := range stepSizes {
			live[i] = alloc(n)
		}
		for i := len(live) - 1; i >= 0; i-- {
			free(live[i])
		}
	}
}

// BenchmarkTrainingCaching reports the caching allocator's hit rate (the
// share of mallocs after the warm-up that reserved no new segment) and its
// reserved/allocated ratio at the peak.
func BenchmarkTrainingCaching(b *testing.B) {
	for b.Loop() {
		dev := gpu.NewDevice(1<<30, nil)
		c, _ := gpu.NewCaching(dev, gpu.CachingOptions{})
		alloc := func(n uint64) traces.Addr {
			a, err := c.Malloc(n, 0)
			if err != nil {
				b.Fatal(err)
			}
			return a
		}
		free := func(a traces.Addr) { _ = c.Free(a) }
		params(alloc)
		trainingSteps(warmSteps, alloc, free)
		before := c.Stats().NumDeviceAlloc
		const steps = 100
		trainingSteps(steps, alloc, free)
		st := c.Stats()
		misses := st.NumDeviceAlloc - before
		b.ReportMetric(100*(1-float64(misses)/float64(steps*len(stepSizes))), "%hits")
		b.ReportMetric(float64(st.ReservedBytes.All.Peak)/float64(st.AllocatedBytes.All.Peak), "reserved/allocated")
	}
}

// BenchmarkTrainingPersistent reports the persistent pool's hit rate after
// the warm-up and its reserved/allocated ratio at the peak; "no-reuse" is
// the same pool with pool-key-never-matches on, which behaves as the
// seed's pool (acquire disabled): the baseline, in the same process.
func BenchmarkTrainingPersistent(b *testing.B) {
	for _, v := range []struct {
		name   string
		faults []impl.Fault
	}{{"reuse", nil}, {"no-reuse", []impl.Fault{gpu.FaultPoolKeyNeverMatches}}} {
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				dev := gpu.NewDevice(1<<40, nil) // simulated: the no-reuse pool grows every step
				p, _ := gpu.NewPersistent(dev, gpu.PersistentOptions{Faults: v.faults})
				var live, peak uint64
				sizes := map[traces.Addr]uint64{}
				alloc := func(n uint64) traces.Addr {
					a, err := p.Acquire(gpu.Key{Elements: n, DType: gpu.U8})
					if err != nil {
						b.Fatal(err)
					}
					sizes[a] = n
					live += n
					peak = max(peak, live)
					return a
				}
				free := func(a traces.Addr) { live -= sizes[a]; _ = p.Release(a) }
				params(alloc)
				trainingSteps(warmSteps, alloc, free)
				st0 := p.Stats()
				trainingSteps(100, alloc, free)
				st := p.Stats()
				hits, misses := st.Hits-st0.Hits, st.Misses-st0.Misses
				b.ReportMetric(100*float64(hits)/float64(hits+misses), "%hits")
				b.ReportMetric(float64(st.TotalAllocatedBytes)/float64(peak), "reserved/allocated")
			}
		})
	}
}

// BenchmarkAllocFree times a Malloc and a Free of the caching allocator
// (in steady state: a cached block, split and merged again) against an
// insert and a delete in a plain Go map, the baseline. The two run in
// alternating chunks of the same process, so that a machine shared with
// other work slows both alike; x-map is the ratio.
func BenchmarkAllocFree(b *testing.B) {
	for _, n := range []uint64{4096, 4 << 20} {
		b.Run(fmt.Sprintf("%dKiB", n>>10), func(b *testing.B) {
			m := map[traces.Addr]uint64{}
			c, _ := gpu.NewCaching(gpu.NewDevice(1<<30, nil), gpu.CachingOptions{})
			var base, took time.Duration
			const chunk = 1000
			for done := 0; done < b.N; done += chunk {
				k := min(chunk, b.N-done)
				start := time.Now()
				for i := range k {
					a := traces.Addr(i&1023) << 12
					m[a] = n
					delete(m, a)
				}
				mid := time.Now()
				for range k {
					a, _ := c.Malloc(n, 0)
					_ = c.Free(a)
				}
				base += mid.Sub(start)
				took += time.Since(mid)
			}
			b.ReportMetric(float64(took.Nanoseconds())/float64(b.N), "pool-ns/op")
			b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), "map-ns/op")
			b.ReportMetric(float64(took)/float64(base), "x-map")
		})
	}
}
