package registry_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/registry"
	"github.com/tlcheck/tlcheck/internal/watchdog"
	"github.com/tlcheck/tlcheck/traces"
)

// onShard returns the n-th pointer from 0x1000 up, in steps of 0x40, that
// hashes to shard i of r.
func onShard(r *registry.Registry, i, n int) registry.Ptr {
	for p := registry.Ptr(0x1000); ; p += 0x40 {
		if r.ShardOf(p) == i {
			if n == 0 {
				return p
			}
			n--
		}
	}
}

// TestUnregisterRechecksAfterRelocking aims at the window of Unregister on
// an alias whose buffer lives in another shard: it reads the alias under
// the alias's shard lock, lets that lock go and takes both shards' locks
// in order, and only then removes the name and drops the count. In that
// window a second Unregister of the same name may run whole, and the name
// may be given to something else (the rows); the first call must see it
// and look again, not remove the new name nor drop the old buffer's count
// a second time. Each round races two Unregisters of alias p of buffer r1,
// the one that succeeds followed at once by the row's call, and then
// checks that nothing but p itself was freed while r1 is registered, and
// that r1 and r2 each free exactly once when unregistered. Without the
// re-check every row fails in its first round; with a re-check of p's
// presence only, every row but the first.
func TestUnregisterRechecksAfterRelocking(t *testing.T) {
	for _, tt := range recheckRows {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rounds, took, msg := recheckRounds(t, nil, tt.after)
			if msg != "" {
				t.Fatalf("round %d (after %v): %s", rounds, took, msg)
			}
			t.Logf("%d rounds in %v", rounds, took)
		})
	}
}

// TestRecheckCatchesNoRecheck is the proof of power of
// TestUnregisterRechecksAfterRelocking: with the fault
// registry-no-recheck on, every row fails within its rounds.
func TestRecheckCatchesNoRecheck(t *testing.T) {
	for _, tt := range recheckRows {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rounds, took, msg := recheckRounds(t, []impl.Fault{registry.FaultRegistryNoRecheck}, tt.after)
			if msg == "" {
				t.Fatalf("fault %s escaped %d rounds (%v)", registry.FaultRegistryNoRecheck, rounds, took)
			}
			t.Logf("caught in round %d: %s", rounds, msg)
		})
	}
}

// recheckRows are what the name becomes right after the Unregister that
// succeeds.
var recheckRows = []struct {
	name  string
	after func(r *registry.Registry, p, r2 registry.Ptr) error
}{
	{"the name stays free", nil},
	{"the name aliases a buffer of another shard", func(r *registry.Registry, p, r2 registry.Ptr) error { return r.Alias(r2, p) }},
	{"the name is a plain pointer", func(r *registry.Registry, p, _ registry.Ptr) error { return r.Register(p, 64) }},
	{"the name is a buffer of its own", func(r *registry.Registry, p, _ registry.Ptr) error {
		return r.RegisterBuffer(p, 64, registry.KindHeap)
	}},
}

// recheckRounds runs rounds of one row on a registry with faults, up to
// 300 or a second, and returns how many ran, for how long, and what the
// last went wrong with ("" if none did).
func recheckRounds(t *testing.T, faults []impl.Fault, after func(r *registry.Registry, p, r2 registry.Ptr) error) (int, time.Duration, string) {
	// The window is short; a neighbour that holds r1's shard lock (its
	// recorder waits on a gate under the lock) widens it: both
	// Unregisters pass their first look and wait there for both locks,
	// and the one that gets them first gives the name away while the
	// other is still waiting.
	var held atomic.Pointer[gate]
	r, err := registry.New(registry.Config{Shards: 4, Record: gateRecorder(&held), Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	// r1's shard first in lock order, so that the relock waits on it
	// before it takes p's; r2 and p on two more, so that the Alias to r2
	// does not wait on r1's shard.
	r1, p, r2, q := onShard(r, 0, 0), onShard(r, 1, 0), onShard(r, 2, 0), onShard(r, 0, 1)
	hold := holder(r, &held, q)
	pet := watchdog.Test(t, stall).Pet
	start := time.Now()
	rounds := 0
	for ; rounds < 300 && time.Since(start) < time.Second; rounds++ {
		if msg := recheckRound(r, p, r1, r2, q, hold, after); msg != "" {
			return rounds, time.Since(start).Round(time.Millisecond), msg
		}
		pet()
	}
	return rounds, time.Since(start).Round(time.Millisecond), ""
}

// gate holds a shard's lock: the recorder of the malloc event of addr
// closes entered and waits for open.
type gate struct {
	addr          traces.Addr
	entered, open chan struct{}
}

// gateRecorder is a registry's recorder that waits on the gate in held,
// if there is one, at its malloc event.
func gateRecorder(held *atomic.Pointer[gate]) func(traces.Event) {
	return func(ev traces.Event) {
		if g := held.Load(); g != nil && ev.Addr == g.addr && ev.Op == traces.OpMalloc {
			close(g.entered)
			<-g.open
		}
	}
}

// holder returns a hold for recheckRound: it registers noise, whose
// recorder then holds noise's shard lock at held's gate until release.
func holder(r *registry.Registry, held *atomic.Pointer[gate], noise registry.Ptr) func() (release func()) {
	return func() (release func()) {
		g := &gate{addr: traces.Addr(noise), entered: make(chan struct{}), open: make(chan struct{})}
		held.Store(g)
		go func() { _ = r.Register(noise, 8) }()
		<-g.entered
		return func() {
			held.Store(nil)
			close(g.open)
		}
	}
}

// recheckRound is one round of TestUnregisterRechecksAfterRelocking; it
// says what went wrong, or "". hold takes r1's shard lock through the
// neighbour's pointer noise, until release.
func recheckRound(r *registry.Registry, p, r1, r2, noise registry.Ptr, hold func() (release func()),
	after func(r *registry.Registry, p, r2 registry.Ptr) error) string {
	for _, err := range []error{r.RegisterBuffer(r1, 64, registry.KindHeap), r.RegisterBuffer(r2, 64, registry.KindHeap), r.Alias(r1, p)} {
		if err != nil {
			return "setup: " + err.Error()
		}
	}
	// Both goroutines unregister p, and the one that succeeds gives the
	// name away at once, while the other may still be in its window.
	var freed [2]registry.Block
	var afterErr [2]error
	var wg sync.WaitGroup
	begin := make(chan struct{})
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-begin
			var err error
			if freed[i], err = r.Unregister(p); err == nil && after != nil {
				afterErr[i] = after(r, p, r2)
			}
		}()
	}
	release := hold()
	close(begin)
	time.Sleep(time.Millisecond) // both past their first look, waiting for the held lock
	release()
	wg.Wait()
	if _, err := r.Unregister(noise); err != nil {
		return "the neighbour: " + err.Error()
	}
	for _, b := range freed {
		if b.Ptr != 0 && b.Ptr != p {
			return fmt.Sprintf("an Unregister(%v) freed %v, which is still registered", p, b.Ptr)
		}
	}
	for _, err := range afterErr {
		if err != nil {
			return "the call after the Unregister: " + err.Error()
		}
	}
	if r.IsRegistered(p) {
		if _, err := r.Unregister(p); err != nil {
			return err.Error()
		}
	}
	for _, q := range []registry.Ptr{r1, r2} {
		if b, err := r.Unregister(q); err != nil || b.Ptr != q {
			return fmt.Sprintf("Unregister(%v) freed %v (%v), want %v: its count is off", q, b.Ptr, err, q)
		}
	}
	if leaks := r.Leaks(); len(leaks) > 0 {
		return fmt.Sprintf("left registered: %v", leaks)
	}
	return ""
}
