package registry_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/registry"
	"github.com/tlcheck/tlcheck/internal/watchdog"
)

// triggers runs each registry fault's Trigger (impl's catalog) on a
// registry and says what it saw: a correct registry must see nothing, a
// registry with the fault must show it.
// pet is called as each try completes.
var triggers = map[impl.Fault]func(r *registry.Registry, pet func()) (shown string){
	// RegisterBuffer(b,64); in parallel Alias(b,a1) || Alias(b,a2);
	// Unregister(b); Unregister(a1) [b freed, though a2 still names it].
	// The race is real, so the trigger is tried many times.
	registry.FaultRegistryCountOutsideLock: func(r *registry.Registry, pet func()) string {
		for i := range 1000 {
			b := registry.Ptr(0x10000 * (i + 1))
			a1, a2 := b+0x10, b+0x20
			if err := r.RegisterBuffer(b, 64, registry.KindHeap); err != nil {
				return err.Error()
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			for _, a := range []registry.Ptr{a1, a2} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_ = r.Alias(b, a)
				}()
			}
			close(start)
			wg.Wait()
			_, _ = r.Unregister(b)
			if blk, _ := r.Unregister(a1); blk.Ptr != 0 {
				return "a buffer freed while an alias still names it"
			}
			_, _ = r.Unregister(a2)
			pet()
		}
		return ""
	},
	// RegisterBuffer(b,64); Alias(b,a); Unregister(a); Unregister(a)
	// [b freed, still registered]; Unregister(b) [count -1].
	registry.FaultRegistryAliasUnderflow: func(r *registry.Registry, _ func()) string {
		const b, a = 0x1000, 0x2000
		if err := r.RegisterBuffer(b, 64, registry.KindHeap); err != nil {
			return err.Error()
		}
		_ = r.Alias(b, a)
		_, _ = r.Unregister(a)
		blk, err := r.Unregister(a)
		if !errors.Is(err, registry.ErrNotRegistered) {
			return "a second unregister of an alias succeeded"
		}
		if blk.Ptr != 0 {
			return "a second unregister of an alias freed the buffer"
		}
		if blk, _ := r.Unregister(b); blk.Ptr != b {
			return "the buffer's own unregister did not free it"
		}
		return ""
	},
	// RegisterBuffer(r1,64); Alias(r1,p) [p and r1 on two shards]; in
	// parallel Unregister(p) || Unregister(p), both past their first look
	// while r1's shard is held [both succeed: r1 freed while registered].
	// The rounds of TestUnregisterRechecksAfterRelocking, with a neighbour
	// holding r1's shard lock through the gate of gated's recorder.
	registry.FaultRegistryNoRecheck: func(r *registry.Registry, pet func()) string {
		r1, p, r2, q := onShard(r, 0, 0), onShard(r, 1, 0), onShard(r, 2, 0), onShard(r, 0, 1)
		for range 50 {
			if msg := recheckRound(r, p, r1, r2, q, holder(r, &triggerGate, q), nil); msg != "" {
				return msg
			}
			pet()
		}
		return ""
	},
}

func TestFaultTriggers(t *testing.T) {
	n := 0
	for _, fi := range impl.Catalog() {
		if fi.Engine != impl.EngineRegistry {
			continue
		}
		n++
		t.Run(string(fi.Name), func(t *testing.T) {
			trig, ok := triggers[fi.Name]
			if !ok {
				t.Fatalf("no trigger for fault %s", fi.Name)
			}
			pet := watchdog.Test(t, stall).Pet
			good := gated(t)
			if shown := trig(good, pet); shown != "" {
				t.Errorf("the correct registry shows: %s", shown)
			}
			bad := gated(t, fi.Name)
			if shown := trig(bad, pet); shown == "" {
				t.Errorf("fault %s does not show\ntrigger: %s", fi.Name, fi.Trigger)
			} else {
				t.Logf("shows: %s", shown)
			}
		})
	}
	if n != len(triggers) {
		t.Errorf("%d registry faults in the catalog, %d triggers here", n, len(triggers))
	}
}

// triggerGate is the gate of the registries of TestFaultTriggers.
var triggerGate atomic.Pointer[gate]

// gated returns a registry of 4 shards whose recorder waits on the gate
// in triggerGate (see holder), for the triggers that need a window held
// open.
func gated(t *testing.T, faults ...impl.Fault) *registry.Registry {
	t.Helper()
	r, err := registry.New(registry.Config{Shards: 4, Record: gateRecorder(&triggerGate), Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFaultyBooksNeverPanic: a registry with a fault on keeps its books
// wrong, on purpose, but its queries and leak report still answer.
func TestFaultyBooksNeverPanic(t *testing.T) {
	r, _ := newReg(t, registry.FaultRegistryAliasUnderflow)
	const b, a = 0x1000, 0x2000
	must(t, r.RegisterBuffer(b, 64, registry.KindDevice))
	must(t, r.Alias(b, a))
	for range 3 {
		_, _ = r.Unregister(a) // frees b at the second, while b still names it
	}
	leaks := r.End()
	if len(leaks) != 1 || leaks[0].Ptr != b || !leaks[0].Real || len(leaks[0].Aliases) != 1 {
		t.Errorf("leaks %+v, want the freed buffer with its two stale names", leaks)
	}
	if r.Buffers() != 0 || r.Pointers() != 2 {
		t.Errorf("%d buffers, %d pointers; want 0 and 2", r.Buffers(), r.Pointers())
	}
}
