package impl_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
)

// poolTriggers holds, for every pool fault (Engine "pool"), its trigger
// run on the allocators of impl/gpu with the given faults, and what the
// faulty run shows. A trigger returns what it observed as one line.
var poolTriggers = map[impl.Fault]struct {
	run  func(faults []impl.Fault) string
	want string // the faulty run's observation
}{
	gpu.FaultPoolDuplicateFreeEntry: {func(fs []impl.Fault) string {
		p, _ := gpu.NewPersistent(gpu.NewDevice(64<<20, nil), gpu.PersistentOptions{Faults: fs})
		k := gpu.Key{Elements: 256, DType: gpu.F32}
		a, _ := p.Acquire(k)
		_ = p.Release(a)
		err := p.Release(a)
		b, _ := p.Acquire(k)
		c, _ := p.Acquire(k)
		return fmt.Sprintf("second release refused: %v; b==c: %v", err != nil, b == c)
	}, "second release refused: false; b==c: true"},
	gpu.FaultPoolKeyNeverMatches: {func(fs []impl.Fault) string {
		p, _ := gpu.NewPersistent(gpu.NewDevice(64<<20, nil), gpu.PersistentOptions{Faults: fs})
		k := gpu.Key{Elements: 256, DType: gpu.F32}
		a, _ := p.Acquire(k)
		_ = p.Release(a)
		b, _ := p.Acquire(k)
		return fmt.Sprintf("reused: %v; hits %d", a == b, p.Stats().Hits)
	}, "reused: false; hits 0"},
	gpu.FaultPoolSplitRemainderLost: {func(fs []impl.Fault) string {
		dev := gpu.NewDevice(64<<20, nil)
		c, _ := gpu.NewCaching(dev, gpu.CachingOptions{Faults: fs})
		a, _ := c.Malloc(512, 0)
		_ = c.Free(a)
		c.EmptyCache()
		return fmt.Sprintf("reserved after empty_cache: %d", dev.Used())
	}, "reserved after empty_cache: 2097152"},
	gpu.FaultPoolFreeNoMerge: {func(fs []impl.Fault) string {
		c, _ := gpu.NewCaching(gpu.NewDevice(20<<20, nil), gpu.CachingOptions{Faults: fs})
		a, _ := c.Malloc(2<<20, 0)
		b, _ := c.Malloc(2<<20, 0)
		_, _ = c.Free(a), c.Free(b)
		_, err := c.Malloc(20<<20, 0)
		return fmt.Sprintf("out of memory: %v", err != nil)
	}, "out of memory: true"},
	gpu.FaultPoolStatsDrift: {func(fs []impl.Fault) string {
		c, _ := gpu.NewCaching(gpu.NewDevice(64<<20, nil), gpu.CachingOptions{Faults: fs})
		a, _ := c.Malloc(1000, 0)
		_ = c.Free(a)
		return fmt.Sprintf("allocated_bytes.all.current %d", c.Stats().AllocatedBytes.All.Current)
	}, "allocated_bytes.all.current 24"},
	gpu.FaultPoolReuseOldest: {func(fs []impl.Fault) string {
		p, _ := gpu.NewPersistent(gpu.NewDevice(64<<20, nil), gpu.PersistentOptions{Faults: fs})
		k := gpu.Key{Elements: 256, DType: gpu.F32}
		a, _ := p.Acquire(k)
		b, _ := p.Acquire(k)
		_, _ = p.Release(a), p.Release(b)
		c, _ := p.Acquire(k)
		return fmt.Sprintf("reused the first released: %v", c == a)
	}, "reused the first released: true"},
	gpu.FaultPoolPreallocExactFit: {func(fs []impl.Fault) string {
		dev := gpu.NewDevice(64<<20, nil)
		p, _ := gpu.NewPersistent(dev, gpu.PersistentOptions{PreallocateBytes: 1 << 20, Faults: fs})
		_, _ = p.Acquire(gpu.Key{Elements: 1 << 18, DType: gpu.F32})
		return fmt.Sprintf("device bytes reserved: %d", dev.Used())
	}, "device bytes reserved: 2097152"},
	gpu.FaultPoolWorstFit: {func(fs []impl.Fault) string {
		c, _ := gpu.NewCaching(gpu.NewDevice(64<<20, nil), gpu.CachingOptions{Faults: fs})
		_, _ = c.Malloc(2<<20, 0)
		b, _ := c.Malloc(30<<20, 0)
		_ = c.Free(b)
		d, _ := c.Malloc(2<<20, 0)
		return fmt.Sprintf("took the 30 MiB block: %v", d == b)
	}, "took the 30 MiB block: true"},
	gpu.FaultPoolReleaseWholeCache: {func(fs []impl.Fault) string {
		dev := gpu.NewDevice(48<<20, nil)
		c, _ := gpu.NewCaching(dev, gpu.CachingOptions{MaxSplitSize: 24 << 20, Faults: fs})
		a, _ := c.Malloc(24<<20, 0)
		b, _ := c.Malloc(24<<20, 0)
		_, _ = c.Free(a), c.Free(b)
		_, _ = c.Malloc(5<<20, 0)
		return fmt.Sprintf("reserved %d MiB, %d retries", dev.Used()>>20, c.Stats().NumAllocRetries)
	}, "reserved 20 MiB, 1 retries"},
}

// TestPoolFaultsShow runs each pool fault's trigger on correct allocators
// and with the fault on: the faulty run shows what the trigger documents,
// the correct one does not.
func TestPoolFaultsShow(t *testing.T) {
	for _, f := range impl.Catalog() {
		if f.Engine != impl.EnginePool {
			continue
		}
		t.Run(string(f.Name), func(t *testing.T) {
			trig, ok := poolTriggers[f.Name]
			if !ok {
				t.Fatalf("no trigger for pool fault %s", f.Name)
			}
			good, bad := trig.run(nil), trig.run([]impl.Fault{f.Name})
			if bad != trig.want {
				t.Errorf("faulty run: %s, want %s", bad, trig.want)
			}
			if good == bad {
				t.Errorf("fault does not show: the correct allocators also give %s", good)
			}
		})
	}
}

// TestRuntimeRefusesPoolFaults: a pool fault has nothing to break in a
// Runtime, so its Config refuses it, naming the fault and its engine.
func TestRuntimeRefusesPoolFaults(t *testing.T) {
	for _, f := range impl.Catalog() {
		if f.Engine != impl.EnginePool {
			continue
		}
		err := impl.Config{Faults: []impl.Fault{f.Name}}.Validate()
		if err == nil || !strings.Contains(err.Error(), string(f.Name)) || !strings.Contains(err.Error(), "pool engine") {
			t.Errorf("Validate with %s = %v, want an error naming the fault and the pool engine", f.Name, err)
		}
	}
}
