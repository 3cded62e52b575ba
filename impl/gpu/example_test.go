package gpu_test

import (
	"fmt"
	"os"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/model"
)

// The caching allocator on a 1 GiB device, its trace replayed by the model.
func ExampleCachingAllocator() {
	var rec impl.Recording
	dev := gpu.NewDevice(1<<30, rec.Record)
	c, _ := gpu.NewCaching(dev, gpu.CachingOptions{})
	a, _ := c.Malloc(1000, 0) // rounded to 1024, from a new 2 MiB segment
	b, _ := c.Malloc(3<<20, 0)
	_ = c.Free(a)
	_ = c.Free(b)
	st := c.Stats().Map()
	fmt.Println("reserved:", st["reserved_bytes.all.current"], "peak allocated:", st["allocated_bytes.all.peak"])
	c.EmptyCache()
	dev.End()
	rep, _ := model.Replay(rec.Source())
	fmt.Println("events:", rep.Events, "violations:", len(rep.Violations))
	// Output:
	// reserved: 23068672 peak allocated: 3146752
	// events: 9 violations: 0
}

// The persistent pool reuses a released tensor of the same key.
func ExamplePersistentPool() {
	dev := gpu.NewDevice(1<<30, nil)
	p, _ := gpu.NewPersistent(dev, gpu.PersistentOptions{PreallocateBytes: 64 << 20})
	k := gpu.Key{Elements: 1 << 20, DType: gpu.F32}
	for range 10 { // ten training steps
		a, _ := p.Acquire(k)
		_ = p.Release(a)
	}
	_ = p.Dump(os.Stdout)
	// Output:
	// === PersistentGpuPool Stats ===
	// Total allocated: 67108864 bytes (64 MB)
	// Free pool: 1 tensors, 4194304 bytes (4 MB)
	// Acquire hits: 9
	// Acquire misses: 1
	// Hit rate: 90.00%
	// Active tensors: 0
	// ===============================
}

// With max_split_size_mb:24, a device full of cached 24 MiB blocks makes
// room for a 5 MiB request by returning one of them, as PyTorch's
// release_available_cached_blocks does, without a retry.
func ExampleCachingOptions_maxSplitSize() {
	c, _ := gpu.NewCaching(gpu.NewDevice(48<<20, nil), gpu.CachingOptions{MaxSplitSize: 24 << 20})
	a, _ := c.Malloc(24<<20, 0)
	b, _ := c.Malloc(24<<20, 0)
	_, _ = c.Free(a), c.Free(b)
	_, _ = c.Malloc(5<<20, 0)
	st := c.Stats().Map()
	fmt.Println("reserved MiB:", st["reserved_bytes.all.current"]>>20, "segments:", st["segment.all.current"], "retries:", st["num_alloc_retries"])
	// Output:
	// reserved MiB: 44 segments: 2 retries: 0
}
