package pool

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/internal/proptest"
	"github.com/tlcheck/tlcheck/traces"
)

// TestPoolPropertyHoldsOnCorrectAllocators: with no fault, no generated
// program breaks a pool property.
func TestPoolPropertyHoldsOnCorrectAllocators(t *testing.T) {
	p, f, n := search(nil, 7, func(n int) bool { return n < 400 })
	if f != nil {
		t.Fatalf("program %d fails on the correct allocators: %v\n%v", n, f, p)
	}
}

// TestEveryPoolFaultIsCaught is the pool property's proof of power: each
// pool fault of the catalog, on alone, breaks it within a budget, the
// shrunk program fails for the fault's sake only, and its trace is one a
// reader accepts.
func TestEveryPoolFaultIsCaught(t *testing.T) {
	for _, fi := range impl.Catalog() {
		if fi.Engine != impl.EnginePool {
			continue
		}
		t.Run(string(fi.Name), func(t *testing.T) {
			faults := []impl.Fault{fi.Name}
			p, f, n := search(faults, 1, func(n int) bool { return n < 2000 })
			if f == nil {
				t.Fatalf("fault %s escaped %d pool programs\ntrigger: %s", fi.Name, n, fi.Trigger)
			}
			small, sf := Shrink(p, faults)
			t.Logf("caught after %d programs by %s; shrunk to %d calls, %d events: %s", n, sf.Property, len(small.Ops), sf.Events(), sf.Message)
			if g := Run(small, nil); g != nil {
				t.Errorf("the shrunk program fails without the fault too: %v", g)
			}
			var buf bytes.Buffer
			if err := sf.WriteTrace(&buf); err != nil {
				t.Fatal(err)
			}
			if _, err := traces.NewReader(&buf); err != nil {
				t.Errorf("the failure's trace does not read back: %v", err)
			}
		})
	}
}

// poolOp draws one call for the state machine. A persistent pool's
// acquires pick among keys, a few per program, so that a key's free list
// often holds several tensors and the order they come back in shows.
func poolOp(persistent bool, keys []gpu.Key) *rapid.Generator[Op] {
	return rapid.Custom(func(t *rapid.T) Op {
		if persistent {
			k := rapid.SampledFrom(keys).Draw(t, "key")
			return Op{
				Kind:   rapid.SampledFrom([]string{"acquire", "acquire", "release", "release", "rerelease"}).Draw(t, "kind"),
				Size:   k.Elements,
				DType:  k.DType,
				Device: k.Device,
				Index:  rapid.IntRange(0, 7).Draw(t, "index"),
			}
		}
		return Op{
			Kind:   rapid.SampledFrom([]string{"malloc", "malloc", "free", "free", "record", "sync", "empty"}).Draw(t, "kind"),
			Size:   rapid.SampledFrom(poolSizes).Draw(t, "size"),
			Stream: gpu.Stream(rapid.IntRange(0, 1).Draw(t, "stream")),
			Index:  rapid.IntRange(0, 7).Draw(t, "index"),
		}
	})
}

// poolKey draws one key of the persistent pool.
var poolKey = rapid.Custom(func(t *rapid.T) gpu.Key {
	return gpu.Key{Elements: rapid.SampledFrom(poolElems).Draw(t, "elems"), DType: rapid.SampledFrom([]gpu.DType{gpu.F32, gpu.F16}).Draw(t, "dtype"),
		Device: uint8(rapid.IntRange(0, 1).Draw(t, "device"))}
})

// poolProgram draws a program for the rapid state-machine property.
func poolProgram(t *rapid.T) Program {
	persistent := rapid.Bool().Draw(t, "persistent")
	p := Program{Persistent: persistent, Capacity: uint64(rapid.IntRange(24, 72).Draw(t, "capacityMiB")) << 20}
	if !persistent && rapid.Bool().Draw(t, "maxSplit") {
		p.MaxSplitSize = uint64(rapid.IntRange(21, 32).Draw(t, "maxSplitMiB")) << 20
	}
	var keys []gpu.Key
	if persistent {
		p.Preallocate = rapid.SampledFrom(poolPreallocs).Draw(t, "preallocate")
		keys = rapid.SliceOfN(poolKey, 1, 3).Draw(t, "keys")
	}
	p.Ops = rapid.SliceOfN(poolOp(persistent, keys), 1, 60).Draw(t, "ops")
	return p
}

// rapidPoolProperty is the state machine: random malloc, free,
// record_stream, synchronize and empty_cache calls (or acquire and
// release), the books recounted after each, the trace replayed by the
// model at the end.
func rapidPoolProperty(faults []impl.Fault) func(*rapid.T) {
	return func(t *rapid.T) {
		p := poolProgram(t)
		if f := Run(p, faults); f != nil {
			t.Fatalf("%v\n%v", f, p)
		}
	}
}

func TestRapidPoolStateMachine(t *testing.T) {
	rapid.Check(t, rapidPoolProperty(nil))
}

// TestRapidPoolStateMachineCatchesFaults: the same property fails with
// each pool fault on.
func TestRapidPoolStateMachineCatchesFaults(t *testing.T) {
	proptest.SetFlag(t, "rapid.nofailfile", "true")
	proptest.SetFlag(t, "rapid.seed", proptest.RapidSeed)
	proptest.SetFlag(t, "rapid.checks", "1000")
	proptest.SetFlag(t, "rapid.shrinktime", "100ms")
	for _, fi := range impl.Catalog() {
		if fi.Engine != impl.EnginePool {
			continue
		}
		t.Run(string(fi.Name), func(t *testing.T) {
			tb := proptest.NewSilentTB(t.Name())
			rapid.Check(tb, rapidPoolProperty([]impl.Fault{fi.Name}))
			if !tb.Failed() {
				t.Errorf("fault %s escaped the rapid pool property", fi.Name)
			}
		})
	}
}
