package pool

import (
	"errors"
	"testing"

	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/internal/proptest"
)

// cachingMachine is the caching allocator as a rapid state machine: each
// action is one call, the "" action checks the books after every call,
// and the end of the run frees everything, empties the cache and replays
// the trace through the model.
type cachingMachine struct {
	rec      impl.Recording
	dev      *gpu.Device
	c        *gpu.CachingAllocator
	maxSplit uint64
	live     []liveBlock
}

func newCachingMachine(t *rapid.T, faults []impl.Fault) *cachingMachine {
	m := &cachingMachine{}
	m.dev = gpu.NewDevice(uint64(rapid.IntRange(24, 72).Draw(t, "capacityMiB"))<<20, m.rec.Record)
	opts := gpu.CachingOptions{Faults: faults}
	if rapid.Bool().Draw(t, "maxSplit") {
		opts.MaxSplitSize = uint64(rapid.IntRange(21, 32).Draw(t, "maxSplitMiB")) << 20
	}
	m.c, _ = gpu.NewCaching(m.dev, opts)
	m.maxSplit = opts.MaxSplitSize
	return m
}

func (m *cachingMachine) actions() map[string]func(*rapid.T) {
	pick := func(t *rapid.T) int { return rapid.IntRange(0, len(m.live)-1).Draw(t, "block") }
	return map[string]func(*rapid.T){
		"malloc": func(t *rapid.T) {
			n := rapid.SampledFrom(poolSizes).Draw(t, "size")
			before, snap := m.c.Stats(), m.c.Snapshot()
			s := gpu.Stream(rapid.IntRange(0, 1).Draw(t, "stream"))
			a, err := m.c.Malloc(n, s)
			if msg := judgeFit(snap, m.c.Snapshot(), n, s, m.maxSplit, a, err); msg != "" {
				t.Fatalf("Fit: %s", msg)
			}
			if msg := judgeRelease(snap, m.c.Snapshot(), m.c.Stats().NumAllocRetries-before.NumAllocRetries, n, s, m.maxSplit, m.dev.Capacity(), a); msg != "" {
				t.Fatalf("Release: %s", msg)
			}
			var oom *gpu.OutOfMemoryError
			switch {
			case errors.As(err, &oom) || n >= gpu.MaxRequest:
				if prop, msg := judgeOOM(m.c, n, before, err); prop != "" {
					t.Fatalf("%s: %s", prop, msg)
				}
			case err != nil:
				t.Fatal(err)
			default:
				m.live = append(m.live, liveBlock{a, n})
			}
		},
		"free": func(t *rapid.T) {
			if len(m.live) == 0 {
				t.Skip("nothing to free")
			}
			i := pick(t)
			if err := m.c.Free(m.live[i].addr); err != nil {
				t.Fatal(err)
			}
			m.live = append(m.live[:i], m.live[i+1:]...)
		},
		"record_stream": func(t *rapid.T) {
			if len(m.live) == 0 {
				t.Skip("nothing to record")
			}
			if err := m.c.RecordStream(m.live[pick(t)].addr, gpu.Stream(rapid.IntRange(0, 1).Draw(t, "stream"))); err != nil {
				t.Fatal(err)
			}
		},
		"synchronize": func(t *rapid.T) { m.c.Synchronize(gpu.Stream(rapid.IntRange(0, 1).Draw(t, "stream"))) },
		"empty_cache": func(*rapid.T) { m.c.EmptyCache() },
		"": func(t *rapid.T) {
			if prop, msg := checkCaching(m.c, m.live); prop != "" {
				t.Fatalf("%s: %s", prop, msg)
			}
		},
	}
}

// finish frees what is live, empties the cache and checks that nothing
// stays reserved and that the model accepts the trace.
func (m *cachingMachine) finish(t *rapid.T) {
	for _, b := range m.live {
		if err := m.c.Free(b.addr); err != nil {
			t.Fatal(err)
		}
	}
	m.c.EmptyCache()
	if n := m.dev.Used(); n != 0 {
		t.Fatalf("EmptyCache: %d bytes stay reserved", n)
	}
	m.dev.End()
	if msg := (&Failure{Trace: m.rec.Events()}).modelVerdict(); msg != "" {
		t.Fatalf("Model: %s", msg)
	}
}

func cachingMachineProperty(faults []impl.Fault) func(*rapid.T) {
	return func(t *rapid.T) {
		m := newCachingMachine(t, faults)
		t.Repeat(m.actions())
		m.finish(t)
	}
}

func TestRapidCachingMachine(t *testing.T) {
	rapid.Check(t, cachingMachineProperty(nil))
}

// TestRapidCachingMachineCatchesFaults: the machine fails with each
// fault of the caching allocator on.
func TestRapidCachingMachineCatchesFaults(t *testing.T) {
	proptest.SetFlag(t, "rapid.nofailfile", "true")
	proptest.SetFlag(t, "rapid.seed", proptest.RapidSeed)
	proptest.SetFlag(t, "rapid.checks", "1000")
	proptest.SetFlag(t, "rapid.shrinktime", "100ms")
	for _, f := range []impl.Fault{gpu.FaultPoolSplitRemainderLost, gpu.FaultPoolFreeNoMerge, gpu.FaultPoolStatsDrift, gpu.FaultPoolWorstFit, gpu.FaultPoolReleaseWholeCache} {
		t.Run(string(f), func(t *testing.T) {
			tb := proptest.NewSilentTB(t.Name())
			rapid.Check(tb, cachingMachineProperty([]impl.Fault{f}))
			if !tb.Failed() {
				t.Errorf("fault %s escaped the rapid caching machine", f)
			}
		})
	}
}
