package gpu_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

const MiB = 1 << 20

// replayClean replays what rec recorded through the model and fails t on
// any violation.
func replayClean(t *testing.T, rec *impl.Recording) traces.Report {
	t.Helper()
	rep, err := model.Replay(rec.Source())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range rep.Violations {
		t.Errorf("model: %s at event %d: %s", v.Kind, v.Event, v.Message)
	}
	return rep
}

func TestSizes(t *testing.T) {
	for _, c := range []struct{ n, round, segment uint64 }{
		{1, 512, 2 * MiB},
		{512, 512, 2 * MiB},
		{513, 1024, 2 * MiB},
		{MiB, MiB, 2 * MiB},
		{MiB + 1, MiB + 512, 20 * MiB},
		{10*MiB - 512, 10*MiB - 512, 20 * MiB},
		{10 * MiB, 10 * MiB, 10 * MiB},
		{11*MiB + 1, 11*MiB + 512, 12 * MiB},
	} {
		if r := gpu.RoundSize(c.n); r != c.round {
			t.Errorf("RoundSize(%d) = %d, want %d", c.n, r, c.round)
		}
		if s := gpu.AllocationSize(gpu.RoundSize(c.n)); s != c.segment {
			t.Errorf("AllocationSize(%d) = %d, want %d", c.n, s, c.segment)
		}
	}
}

// TestCachingRules walks PyTorch's rules one call at a time: the
// addresses and the reserved bytes after each call.
func TestCachingRules(t *testing.T) {
	var rec impl.Recording
	dev := gpu.NewDevice(64*MiB, rec.Record)
	c, _ := gpu.NewCaching(dev, gpu.CachingOptions{})
	b := gpu.Base
	steps := []struct {
		name     string
		do       func() traces.Addr
		want     traces.Addr
		reserved uint64
	}{
		{"small request carves a 2 MiB segment, takes its low end", mal(c, 1000, 0), b, 2 * MiB},
		{"next small request takes the split remainder", mal(c, 512, 0), b + 1024, 2 * MiB},
		{"large request: a 20 MiB segment", mal(c, 3*MiB, 0), b + 2*MiB, 22 * MiB},
		{"free the first block", free(c, b), 0, 22 * MiB},
		{"best fit: the 1 KiB hole, not the big remainder", mal(c, 700, 0), b, 22 * MiB},
		{"other stream: a segment of its own", mal(c, 512, 1), b + 22*MiB, 24 * MiB},
		{"free all on stream 0", func() traces.Addr {
			free(c, b)()
			free(c, b+1024)()
			free(c, b+2*MiB)()
			return 0
		}, 0, 24 * MiB},
		{"empty_cache returns the merged segments", func() traces.Addr { c.EmptyCache(); return 0 }, 0, 2 * MiB},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want {
			t.Errorf("%s: address %s, want %s", s.name, got, s.want)
		}
		if dev.Used() != s.reserved {
			t.Errorf("%s: reserved %d, want %d", s.name, dev.Used(), s.reserved)
		}
	}
	replayClean(t, &rec)
}

func mal(c *gpu.CachingAllocator, n uint64, s gpu.Stream) func() traces.Addr {
	return func() traces.Addr {
		a, err := c.Malloc(n, s)
		if err != nil {
			panic(err) // a test helper: the table's steps never fail
		}
		return a
	}
}

func free(c *gpu.CachingAllocator, a traces.Addr) func() traces.Addr {
	return func() traces.Addr {
		if err := c.Free(a); err != nil {
			panic(err)
		}
		return 0
	}
}

// TestMaxSplitSize: with max_split_size_mb:24, a block of 24 MiB or more
// is never split, serves no request below 24 MiB, and serves one of 24 MiB
// or more only within 20 MiB of its own size.
func TestMaxSplitSize(t *testing.T) {
	dev := gpu.NewDevice(128*MiB, nil)
	c, err := gpu.NewCaching(dev, gpu.CachingOptions{MaxSplitSize: 24 * MiB})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := c.Malloc(30*MiB, 0) // oversize: its own 30 MiB segment, not split
	_ = c.Free(a)
	if b, _ := c.Malloc(4*MiB, 0); b == a {
		t.Error("a 4 MiB request was served by an oversize cached block")
	}
	if b, _ := c.Malloc(25*MiB, 0); b != a {
		t.Errorf("a 25 MiB request got %s, want the cached 30 MiB block at %s", b, a)
	}
	if n := len(c.Snapshot()[0].Blocks); n != 1 {
		t.Errorf("the oversize block was split into %d", n)
	}
	_ = c.Free(a)
	big, _ := c.Malloc(50*MiB, 0)
	_ = c.Free(big)
	if b, _ := c.Malloc(24*MiB, 0); b == big {
		t.Error("a 24 MiB request was served by a cached 50 MiB block, 20 MiB or more above it")
	}
}

func TestOutOfMemory(t *testing.T) {
	var rec impl.Recording
	dev := gpu.NewDevice(40*MiB, rec.Record)
	c, _ := gpu.NewCaching(dev, gpu.CachingOptions{})
	a, _ := c.Malloc(5*MiB, 0) // a 20 MiB segment, split
	b, _ := c.Malloc(3*MiB, 0) // from its remainder
	_ = c.Free(b)
	x, _ := c.Malloc(200, 0) // a 2 MiB small segment
	_ = c.Free(x)            // cached: freed only on retry
	_, err := c.Malloc(19*MiB, 0)
	if err != nil {
		t.Fatalf("19 MiB should fit after freeing the cached small segment: %v", err)
	}
	st := c.Stats()
	if st.NumAllocRetries != 1 || st.NumDeviceFree != 1 {
		t.Errorf("retries %d, device frees %d; want 1 and 1", st.NumAllocRetries, st.NumDeviceFree)
	}
	_, err = c.Malloc(30*MiB, 0)
	var oom *gpu.OutOfMemoryError
	if !errors.As(err, &oom) {
		t.Fatalf("30 MiB on a full device: %v, want an OutOfMemoryError", err)
	}
	for _, want := range []string{"Tried to allocate 30.00 MiB", "total capacity of 40.00 MiB", "0 bytes is free", "25.00 MiB is allocated", "15.00 MiB is reserved by the allocator but unallocated"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	// Like PyTorch's, the message names the segment it tried to reserve.
	small, _ := gpu.NewCaching(gpu.NewDevice(MiB, nil), gpu.CachingOptions{})
	if _, err := small.Malloc(100, 0); err == nil || !strings.Contains(err.Error(), "Tried to allocate 2.00 MiB") {
		t.Errorf("100 bytes on a 1 MiB device: %v, want it to name the 2 MiB segment", err)
	}
	if c.Stats().NumOOMs != 1 {
		t.Errorf("num_ooms %d, want 1", c.Stats().NumOOMs)
	}
	_ = c.Free(a)
	replayClean(t, &rec)
}

// TestRecordStream: a block another stream used is not reused until that
// stream is synchronized.
func TestRecordStream(t *testing.T) {
	c, _ := gpu.NewCaching(gpu.NewDevice(64*MiB, nil), gpu.CachingOptions{})
	a, _ := c.Malloc(4096, 0)
	if err := c.RecordStream(a, 1); err != nil {
		t.Fatal(err)
	}
	_ = c.Free(a)
	if b, _ := c.Malloc(4096, 0); b == a {
		t.Fatal("reused while stream 1 may still use it")
	}
	if st := c.Stats(); st.Active.All.Current != 2 || st.Allocation.All.Current != 1 {
		t.Errorf("active %d, allocation %d; want 2 (one pending) and 1", st.Active.All.Current, st.Allocation.All.Current)
	}
	c.Synchronize(1)
	if b, _ := c.Malloc(4096, 0); b != a {
		t.Errorf("after synchronize got %s, want the freed block %s", b, a)
	}
}

// TestMisuse: errors name the call and the address, the trace shows them.
func TestMisuse(t *testing.T) {
	var rec impl.Recording
	dev := gpu.NewDevice(4*MiB, rec.Record)
	c, _ := gpu.NewCaching(dev, gpu.CachingOptions{})
	a, _ := c.Malloc(64, 0)
	_ = c.Free(a)
	for _, c := range []struct {
		err  error
		want string
	}{
		{c.Free(a), "Free(" + a.String() + "): not a block"},
		{c.RecordStream(a, 1), "RecordStream(" + a.String()},
		{dev.DevFree(0x1000), "DevFree(0x1000): not a live segment"},
		{func() error { _, err := dev.DevMalloc(0); return err }(), "DevMalloc(0)"},
		{func() error {
			_, err := gpu.NewCaching(dev, gpu.CachingOptions{Faults: []impl.Fault{"nope"}})
			return err
		}(), `unknown fault "nope"`},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", c.err, c.want)
		}
	}
	rep, err := model.Replay(rec.Source())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Violations) != 2 || rep.Violations[0].Kind != traces.DoubleFree {
		t.Errorf("model: %+v, want the double pool_put and the bad dev_free", rep.Violations)
	}
}

// TestModelCatchesDoubleHandout proves the model check can fail on this
// package's traces: the persistent pool with its duplicate guard off
// hands one block to two tensors, and the model sees it.
func TestModelCatchesDoubleHandout(t *testing.T) {
	var rec impl.Recording
	p, _ := gpu.NewPersistent(gpu.NewDevice(64*MiB, rec.Record), gpu.PersistentOptions{Faults: []impl.Fault{gpu.FaultPoolDuplicateFreeEntry}})
	k := gpu.Key{Elements: 256, DType: gpu.F32}
	a, _ := p.Acquire(k)
	_, _ = p.Release(a), p.Release(a)
	_, _ = p.Acquire(k)
	_, _ = p.Acquire(k)
	rep, err := model.Replay(rec.Source())
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[traces.Kind]bool{}
	for _, v := range rep.Violations {
		kinds[v.Kind] = true
	}
	if !kinds[traces.DoubleFree] || !kinds[traces.Overlap] {
		t.Errorf("violations %+v, want a double-free and an overlap", rep.Violations)
	}
}

// TestHugeSizes: sizes whose rounding wraps around are errors, not tiny
// blocks.
func TestHugeSizes(t *testing.T) {
	c, _ := gpu.NewCaching(gpu.NewDevice(64*MiB, nil), gpu.CachingOptions{})
	p, _ := gpu.NewPersistent(gpu.NewDevice(64*MiB, nil), gpu.PersistentOptions{PreallocateBytes: MiB})
	for _, n := range []uint64{math.MaxUint64, math.MaxUint64 - MiB, math.MaxUint64 - 100} {
		if a, err := c.Malloc(n, 0); err == nil {
			t.Errorf("Malloc(%d) = %s", n, a)
		}
		if a, err := p.Acquire(gpu.Key{Elements: n, DType: gpu.U8}); err == nil {
			t.Errorf("Acquire(%d bytes) = %s", n, a)
		}
		if a, err := p.Acquire(gpu.Key{Elements: n / 2, DType: gpu.F64}); err == nil {
			t.Errorf("Acquire(%d f64) = %s", n/2, a)
		}
	}
}

// TestBestFitTies: among free blocks of the same size, the one at the
// lowest address serves the request (PyTorch's BlockComparatorSize orders
// by stream, size, then address), whatever order they were freed in.
func TestBestFitTies(t *testing.T) {
	c, _ := gpu.NewCaching(gpu.NewDevice(64*MiB, nil), gpu.CachingOptions{})
	a, _ := c.Malloc(12*MiB, 0) // a 12 MiB segment each, not split
	b, _ := c.Malloc(12*MiB, 0)
	_ = c.Free(b)
	_ = c.Free(a)
	if got, _ := c.Malloc(12*MiB, 0); got != min(a, b) {
		t.Errorf("got %s; want the lower of the two free 12 MiB blocks, %s", got, min(a, b))
	}
}

// TestEventsStreamByStream: when the events of blocks pending on two
// streams complete together, PyTorch releases the blocks stream by stream
// (process_events walks its map from stream to events), on an H100 with
// PyTorch 2.11 stream 2's before stream 1's (impl/gpu/testdata/cuda,
// split24 splitstreams-0027). Which block goes first shows only in the
// inactive_split totals: released stream 2 first, b merges with the free
// rest of the segment and the segment stays split (no change), then a
// makes it whole (one freed); a first would count one more allocated and
// one more freed.
func TestEventsStreamByStream(t *testing.T) {
	c, _ := gpu.NewCaching(gpu.NewDevice(64*MiB, nil), gpu.CachingOptions{})
	a, _ := c.Malloc(1000, 0) // [a][rest]: one inactive split block
	b, _ := c.Malloc(1000, 0) // [a][b][rest]
	_ = c.RecordStream(a, 1)
	_ = c.RecordStream(b, 2)
	_ = c.Free(a) // pending on stream 1, recorded first
	_ = c.Free(b) // pending on stream 2
	c.Synchronize(1)
	c.Synchronize(2)
	if _, err := c.Malloc(2*MiB, 0); err != nil { // process_events
		t.Fatal(err)
	}
	st := c.Stats().Map()
	for k, want := range map[string]int64{
		"inactive_split.small_pool.current":   0,
		"inactive_split.small_pool.allocated": 1,
		"inactive_split.small_pool.freed":     1,
		"inactive_split.small_pool.peak":      1,
	} {
		if st[k] != want {
			t.Errorf("%s = %d, want %d", k, st[k], want)
		}
	}
}

// TestFreeBlockRequestedSize: memory_snapshot() shows on a free block the
// size its last user asked for, as PyTorch leaves it (free_block does not
// clear requested_size), and a block split off a free one keeps that
// block's; a segment's first block has 0. PyTorch 2.11 on an H100 showed
// such leftovers on 42,168 free blocks of impl/gpu/testdata/cuda.
func TestFreeBlockRequestedSize(t *testing.T) {
	c, _ := gpu.NewCaching(gpu.NewDevice(64*MiB, nil), gpu.CachingOptions{})
	requested := func() []uint64 {
		var out []uint64
		for _, s := range c.Snapshot() {
			for _, b := range s.Blocks {
				out = append(out, b.Requested)
			}
		}
		return out
	}
	a, _ := c.Malloc(1000, 0) // [a 1024: 1000][rest: 0, never handed out]
	if got := requested(); !slices.Equal(got, []uint64{1000, 0}) {
		t.Fatalf("after malloc: requested_size %v, want [1000 0]", got)
	}
	_ = c.Free(a) // merges with the rest: one free block, a's leftover
	if got := requested(); !slices.Equal(got, []uint64{1000}) {
		t.Fatalf("after free: requested_size %v, want [1000]", got)
	}
	_, _ = c.Malloc(3000, 0) // split off the free block: the rest keeps 1000
	if got := requested(); !slices.Equal(got, []uint64{3000, 1000}) {
		t.Fatalf("after a second malloc: requested_size %v, want [3000 1000]", got)
	}
	if st := c.Stats().Map(); st["requested_bytes.all.current"] != 3000 {
		t.Errorf("requested_bytes.all.current %d, want 3000: a leftover is no request", st["requested_bytes.all.current"])
	}
}
