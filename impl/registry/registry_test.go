package registry_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/registry"
	"github.com/tlcheck/tlcheck/internal/watchdog"
	"github.com/tlcheck/tlcheck/traces"
)

// frees collects the blocks a registry frees, safely from any goroutine.
type frees struct {
	mu     sync.Mutex
	blocks []registry.Block
}

func (f *frees) free(b registry.Block) {
	f.mu.Lock()
	f.blocks = append(f.blocks, b)
	f.mu.Unlock()
}

func newReg(t testing.TB, faults ...impl.Fault) (*registry.Registry, *frees) {
	t.Helper()
	f := &frees{}
	r, err := registry.New(registry.Config{Free: f.free, Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	return r, f
}

// TestCalls runs call sequences one at a time and checks each call's
// result, then the frees and the queries at the end.
func TestCalls(t *testing.T) {
	const a, b, c, d = 0x1000, 0x2000, 0x3000, 0x4000
	type step struct {
		call string // "reg P", "buf P", "alias REAL A", "unreg P"
		err  error  // the sentinel the call must return, or nil
		free registry.Ptr
	}
	tests := []struct {
		name            string
		steps           []step
		bytes           uint64
		ptrs, bufs      int
		frees           []registry.Ptr
		registered, not []registry.Ptr
	}{
		{name: "plain", steps: []step{{"reg 0x1000", nil, 0}, {"unreg 0x1000", nil, a}}, frees: []registry.Ptr{a}, not: []registry.Ptr{a}},
		{name: "twice", steps: []step{{"reg 0x1000", nil, 0}, {"reg 0x1000", registry.ErrRegistered, 0}, {"buf 0x1000", registry.ErrRegistered, 0}},
			bytes: 64, ptrs: 1, registered: []registry.Ptr{a}},
		{name: "null", steps: []step{{"reg 0x0", registry.ErrNull, 0}, {"unreg 0x0", registry.ErrNull, 0}, {"alias 0x0 0x1000", registry.ErrNull, 0}}},
		{name: "unregister unknown", steps: []step{{"unreg 0x1000", registry.ErrNotRegistered, 0}}},
		{name: "buffer alone", steps: []step{{"buf 0x1000", nil, 0}, {"unreg 0x1000", nil, a}}, frees: []registry.Ptr{a}},
		{name: "aliases keep the buffer", steps: []step{{"buf 0x1000", nil, 0}, {"alias 0x1000 0x2000", nil, 0}, {"alias 0x1000 0x3000", nil, 0},
			{"unreg 0x1000", nil, 0}, {"unreg 0x3000", nil, 0}},
			bytes: 64, ptrs: 1, bufs: 1, registered: []registry.Ptr{b}, not: []registry.Ptr{a, c}},
		{name: "last alias frees", steps: []step{{"buf 0x1000", nil, 0}, {"alias 0x1000 0x2000", nil, 0}, {"unreg 0x1000", nil, 0},
			{"unreg 0x2000", nil, a}}, frees: []registry.Ptr{a}},
		{name: "held address", steps: []step{{"buf 0x1000", nil, 0}, {"alias 0x1000 0x2000", nil, 0}, {"unreg 0x1000", nil, 0},
			{"reg 0x1000", registry.ErrHeld, 0}, {"alias 0x2000 0x1000", registry.ErrNotBuffer, 0}},
			bytes: 64, ptrs: 1, bufs: 1, registered: []registry.Ptr{b}},
		{name: "alias misuse", steps: []step{{"reg 0x1000", nil, 0}, {"alias 0x1000 0x2000", registry.ErrNotBuffer, 0},
			{"alias 0x3000 0x2000", registry.ErrNotRegistered, 0}, {"buf 0x3000", nil, 0}, {"alias 0x3000 0x1000", registry.ErrRegistered, 0},
			{"alias 0x3000 0x3000", registry.ErrRegistered, 0}, {"alias 0x3000 0x4000", nil, 0}, {"alias 0x4000 0x2000", registry.ErrNotBuffer, 0}},
			bytes: 128, ptrs: 3, bufs: 1, registered: []registry.Ptr{a, c, d}, not: []registry.Ptr{b}},
		{name: "second unregister of an alias", steps: []step{{"buf 0x1000", nil, 0}, {"alias 0x1000 0x2000", nil, 0}, {"unreg 0x2000", nil, 0},
			{"unreg 0x2000", registry.ErrNotRegistered, 0}}, bytes: 64, ptrs: 1, bufs: 1, registered: []registry.Ptr{a}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, f := newReg(t)
			for _, s := range tt.steps {
				blk, err := do(r, s.call)
				if !errors.Is(err, s.err) || (err == nil) != (s.err == nil) {
					t.Fatalf("%s: err %v, want %v", s.call, err, s.err)
				}
				if blk.Ptr != s.free {
					t.Fatalf("%s: freed %v, want %v", s.call, blk.Ptr, s.free)
				}
			}
			var got []registry.Ptr
			for _, b := range f.blocks {
				got = append(got, b.Ptr)
			}
			if !slices.Equal(got, tt.frees) {
				t.Errorf("frees %v, want %v", got, tt.frees)
			}
			if r.TotalBytes() != tt.bytes || r.Pointers() != tt.ptrs || r.Buffers() != tt.bufs {
				t.Errorf("bytes %d, pointers %d, buffers %d; want %d, %d, %d", r.TotalBytes(), r.Pointers(), r.Buffers(), tt.bytes, tt.ptrs, tt.bufs)
			}
			for _, p := range tt.registered {
				if !r.IsRegistered(p) {
					t.Errorf("%v not registered", p)
				}
			}
			for _, p := range tt.not {
				if r.IsRegistered(p) {
					t.Errorf("%v registered", p)
				}
			}
		})
	}
}

// do makes one call written as in TestCalls: buffers are 64 bytes of
// device memory, plain blocks 64 bytes.
func do(r *registry.Registry, call string) (registry.Block, error) {
	var p, q registry.Ptr
	f := strings.Fields(call)
	fmt.Sscan(f[1], &p)
	if len(f) > 2 {
		fmt.Sscan(f[2], &q)
	}
	switch f[0] {
	case "reg":
		return registry.Block{}, r.Register(p, 64)
	case "buf":
		return registry.Block{}, r.RegisterBuffer(p, 64, registry.KindDevice)
	case "alias":
		return registry.Block{}, r.Alias(p, q)
	case "unreg":
		return r.Unregister(p)
	}
	panic("bad call " + call)
}

func TestErrorNamesThePlace(t *testing.T) {
	r, _ := newReg(t)
	err := r.Alias(0x1000, 0x2000)
	var e *registry.Error
	if !errors.As(err, &e) || e.Op != "alias" || e.Ptr != 0x1000 || err.Error() != "registry: alias 0x1000: not registered" {
		t.Errorf("err = %v (%#v)", err, e)
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		cfg  registry.Config
		want string
	}{
		{registry.Config{Shards: -1}, "Config.Shards -1"},
		{registry.Config{Faults: []impl.Fault{"nope"}}, `unknown fault "nope"`},
		{registry.Config{Faults: []impl.Fault{impl.FaultZSTAllocates}}, "zst-allocates belongs to the program engine"},
	}
	for _, tt := range tests {
		if _, err := registry.New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error with %q", tt.cfg, err, tt.want)
		}
	}
}

func TestLeaks(t *testing.T) {
	var rec impl.Recording
	var mu sync.Mutex
	r, err := registry.New(registry.Config{Shards: 3, Record: func(ev traces.Event) { mu.Lock(); rec.Record(ev); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	must(t, r.Register(0x10, 8))
	must(t, r.Register(0x20, 8))
	must(t, r.RegisterBuffer(0x30, 100, registry.KindMapped))
	must(t, r.Alias(0x30, 0x48))
	must(t, r.Alias(0x30, 0x40))
	_, err = r.Unregister(0x30)
	must(t, err)
	_, err = r.Unregister(0x20)
	must(t, err)
	got := fmt.Sprint(r.End())
	want := "[{{0x10 8 heap} [] true} {{0x30 100 mapped} [0x40 0x48] false}]"
	if got != want {
		t.Errorf("leaks %s, want %s", got, want)
	}
	var ops []string
	for _, ev := range rec.Events() {
		ops = append(ops, ev.Op.String()+" "+ev.Addr.String())
	}
	if got, want := strings.Join(ops, "; "), "malloc 0x10; malloc 0x20; malloc 0x30; free 0x20; end 0x0"; got != want {
		t.Errorf("trace %s, want %s", got, want)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestConcurrent hammers one registry from many goroutines: each owns
// some buffers and plain blocks and aliases of them, and shares a few
// buffers with all the others, which alias and unregister them at once.
// Run under -race. At the end every block was freed exactly once, with
// its kind, and nothing is left.
func TestConcurrent(t *testing.T) {
	r, f := newReg(t)
	if problems := hammer(r, f, watchdog.Test(t, stall).Pet); len(problems) > 0 {
		t.Error(strings.Join(problems, "\n"))
	}
}

// TestConcurrentCatchesCountFault: the same check fails on a registry
// whose counts are updated outside the lock.
func TestConcurrentCatchesCountFault(t *testing.T) {
	r, f := newReg(t, impl.FaultRegistryCountOutsideLock)
	problems := hammer(r, f, watchdog.Test(t, stall).Pet)
	if len(problems) == 0 {
		t.Fatal("the fault escaped the concurrent check")
	}
	t.Logf("caught: %s", problems[0])
}

// stall is how long a test of concurrent calls may go without one
// completing before its watchdog ends it as deadlocked, with every
// goroutine's stack: far beyond any call's time, even under -race on a
// loaded machine, and far below go test's ten-minute timeout.
const stall = 5 * time.Second

// hammer is TestConcurrent's run and check; it returns what went wrong.
// pet is called after each goroutine's round.
func hammer(r *registry.Registry, f *frees, pet func()) []string {
	const goroutines, rounds, shared = 32, 200, 4
	var problems []string
	var mu sync.Mutex
	report := func(err error) {
		mu.Lock()
		problems = append(problems, err.Error())
		mu.Unlock()
	}
	for s := range shared {
		if err := r.RegisterBuffer(sharedPtr(s), 256, registry.KindDevice); err != nil {
			return []string{err.Error()}
		}
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			base := registry.Ptr(0x100000 * (g + 1))
			for i := range rounds {
				p := base + registry.Ptr(i*0x100)
				if err := r.RegisterBuffer(p, 64, registry.KindHeap); err != nil {
					report(err)
					return
				}
				a := p + 0x10
				if err := r.Alias(p, a); err != nil {
					report(err)
					return
				}
				// An alias of a shared buffer, made and dropped while the
				// others do the same.
				sa := p + 0x20
				if err := r.Alias(sharedPtr(rng.IntN(shared)), sa); err != nil {
					report(err)
					return
				}
				for _, q := range []registry.Ptr{sa, p, a} {
					blk, err := r.Unregister(q)
					if err != nil {
						report(err)
						return
					}
					if (blk.Ptr != 0) != (q == a) {
						report(fmt.Errorf("unregister %v freed %v", q, blk.Ptr))
					}
				}
				if r.IsRegistered(p) {
					report(fmt.Errorf("%v still registered", p))
				}
				pet()
				if i%50 == 0 {
					_, _, _ = r.TotalBytes(), r.Pointers(), r.Buffers()
				}
			}
		}()
	}
	wg.Wait()
	if r.Buffers() != shared || r.Pointers() != shared {
		problems = append(problems, fmt.Sprintf("after the goroutines: %d buffers, %d pointers; want the %d shared ones", r.Buffers(), r.Pointers(), shared))
	}
	for s := range shared {
		if blk, err := r.Unregister(sharedPtr(s)); err != nil || blk.Kind != registry.KindDevice {
			problems = append(problems, fmt.Sprintf("unregister of shared %v: freed %v, %v", sharedPtr(s), blk, err))
		}
	}
	if n := len(f.blocks); n != goroutines*rounds+shared {
		problems = append(problems, fmt.Sprintf("%d frees, want %d", n, goroutines*rounds+shared))
	}
	seen := map[registry.Ptr]bool{}
	for _, b := range f.blocks {
		if seen[b.Ptr] {
			problems = append(problems, fmt.Sprintf("%v freed twice", b.Ptr))
		}
		seen[b.Ptr] = true
	}
	if leaks := r.End(); len(leaks) != 0 || r.TotalBytes() != 0 {
		problems = append(problems, fmt.Sprintf("left: %v, %d bytes", leaks, r.TotalBytes()))
	}
	return problems
}

func sharedPtr(s int) registry.Ptr { return registry.Ptr(0x10 + 0x40*s) }
