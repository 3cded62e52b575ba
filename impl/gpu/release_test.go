package gpu_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
)

// after is what PyTorch's allocator reports once a case has run:
// reserved_bytes.all.current, segment.all.current, num_alloc_retries,
// num_device_free, num_ooms, and the blocks still pending on another
// stream (active_pending_free in memory_snapshot()).
type after struct {
	reserved               uint64
	segments               int64
	retries, devFrees, oom int64
	pending                int
}

func afterOf(c *gpu.CachingAllocator) after {
	st := c.Stats()
	a := after{uint64(st.ReservedBytes.All.Current), st.Segment.All.Current, st.NumAllocRetries, st.NumDeviceFree, st.NumOOMs, 0}
	for _, s := range c.Snapshot() {
		for _, b := range s.Blocks {
			if b.State == gpu.StatePendingFree {
				a.pending++
			}
		}
	}
	return a
}

// TestReleaseAvailableCachedBlocks holds malloc's way out of a full device
// to PyTorch's (CUDACachingAllocator.cpp, malloc): with max_split_size
// set, release_available_cached_blocks first returns cached oversize
// blocks of the request's pool and stream, only as many as the request
// needs, without waiting on any stream and without counting a retry; only
// if that is not enough does release_cached_blocks return the whole cache,
// after waiting on every stream, and count a retry. Each row ends with a
// malloc that finds the device full; the numbers are PyTorch's: 2.11 on an
// H100 gave each of them (testdata/cuda, the named programs of split24,
// split22 and default; package cudarec replays them).
func TestReleaseAvailableCachedBlocks(t *testing.T) {
	type step struct {
		size   uint64 // malloc; 0: free the block of malloc #index
		stream gpu.Stream
		index  int
		record gpu.Stream // after the malloc: record_stream on this stream (0: none)
	}
	m := func(mib uint64) step { return step{size: mib * MiB} }
	free := func(i int) step { return step{index: i} }
	tests := []struct {
		name     string
		capacity uint64
		maxSplit uint64
		steps    []step
		want     after
	}{
		{"issue 20: one oversize block is enough, so 44 MiB stay reserved in 2 segments", 48 * MiB, 24 * MiB,
			[]step{m(24), m(24), free(0), free(1), m(5)},
			after{reserved: 44 * MiB, segments: 2, devFrees: 1}},
		{"a block pending on another stream stays pending", 50 * MiB, 24 * MiB,
			[]step{m(24), m(24), {size: 512, record: 1}, free(2), free(0), free(1), m(5)},
			after{reserved: 46 * MiB, segments: 3, devFrees: 1, pending: 1}},
		{"the smallest oversize block that is enough, alone", 94 * MiB, 24 * MiB,
			[]step{m(28), m(40), m(26), free(0), free(1), free(2), m(5)},
			after{reserved: 88 * MiB, segments: 3, devFrees: 1}},
		{"no one block is enough: the largest first, until enough", 78 * MiB, 24 * MiB,
			[]step{m(24), m(28), m(26), free(0), free(1), free(2), m(40)},
			after{reserved: 64 * MiB, segments: 2, devFrees: 2}},
		{"not enough: what it freed stays freed, then the whole cache, one retry", 64 * MiB, 24 * MiB,
			[]step{m(26), m(30), {size: 512}, free(0), free(2), m(28)},
			after{reserved: 58 * MiB, segments: 2, retries: 1, devFrees: 2}},
		{"another stream's oversize block is left to release_cached_blocks", 48 * MiB, 24 * MiB,
			[]step{{size: 24 * MiB, stream: 1}, free(0), m(24), m(5)},
			after{reserved: 44 * MiB, segments: 2, retries: 1, devFrees: 1}},
		{"the largest first stops at another stream's blocks", 84 * MiB, 24 * MiB,
			[]step{m(28), m(30), {size: 26 * MiB, stream: 1}, free(0), free(1), free(2), {size: 40 * MiB, stream: 1}},
			after{reserved: 40 * MiB, segments: 1, retries: 1, devFrees: 3}},
		{"a small request: no oversize block in the small pool", 44 * MiB, 22 * MiB,
			[]step{m(22), m(22), free(0), {size: 512}},
			after{reserved: 24 * MiB, segments: 2, retries: 1, devFrees: 1}},
		{"without max_split_size: straight to release_cached_blocks", 48 * MiB, 0,
			[]step{m(24), m(24), free(0), free(1), {size: 5 * MiB, stream: 1}},
			after{reserved: 20 * MiB, segments: 1, retries: 1, devFrees: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec impl.Recording
			dev := gpu.NewDevice(tt.capacity, rec.Record)
			c, err := gpu.NewCaching(dev, gpu.CachingOptions{MaxSplitSize: tt.maxSplit})
			if err != nil {
				t.Fatal(err)
			}
			var got []traces.Addr
			for i, s := range tt.steps {
				if s.size == 0 {
					if err := c.Free(got[s.index]); err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					got = append(got, 0)
					continue
				}
				a, err := c.Malloc(s.size, s.stream)
				if err != nil {
					t.Fatalf("step %d: malloc %d: %v", i, s.size, err)
				}
				if s.record != 0 {
					if err := c.RecordStream(a, s.record); err != nil {
						t.Fatal(err)
					}
				}
				got = append(got, a)
			}
			if a := afterOf(c); a != tt.want {
				t.Errorf("reserved %d MiB in %d segments, %d retries, %d cudaFree, %d OOMs, %d pending;\nwant     %d MiB in %d segments, %d retries, %d cudaFree, %d OOMs, %d pending",
					a.reserved/MiB, a.segments, a.retries, a.devFrees, a.oom, a.pending,
					tt.want.reserved/MiB, tt.want.segments, tt.want.retries, tt.want.devFrees, tt.want.oom, tt.want.pending)
			}
			replayClean(t, &rec)
		})
	}
}

// TestRequestOfOneEiB: PyTorch refuses a request of 1 EiB or more with an
// OutOfMemoryError before its caching allocator sees it: nothing cached is
// freed, nothing is retried, num_ooms stays 0. One byte less goes the
// usual way: the cache freed, one retry, one OOM counted.
func TestRequestOfOneEiB(t *testing.T) {
	for _, tt := range []struct {
		size uint64
		want after
		msg  string
	}{
		{gpu.MaxRequest, after{reserved: 2 * MiB, segments: 1}, "Tried to allocate more than 1EB memory."},
		{gpu.MaxRequest + 12345, after{reserved: 2 * MiB, segments: 1}, "Tried to allocate more than 1EB memory."},
		{gpu.MaxRequest - 1, after{retries: 1, devFrees: 1, oom: 1}, "Tried to allocate 1073741824.00 GiB"},
	} {
		c, _ := gpu.NewCaching(gpu.NewDevice(64*MiB, nil), gpu.CachingOptions{})
		a, _ := c.Malloc(512, 0)
		_ = c.Free(a) // a cached 2 MiB segment
		_, err := c.Malloc(tt.size, 0)
		var oom *gpu.OutOfMemoryError
		if !errors.As(err, &oom) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("malloc %d: %v, want an OutOfMemoryError saying %q", tt.size, err, tt.msg)
		}
		if got := afterOf(c); got != tt.want {
			t.Errorf("malloc %d: after it %+v, want %+v", tt.size, got, tt.want)
		}
	}
}

// TestMaxSplitSizeConfig: PyTorch's max_split_size_mb is a number of MiB
// of at least 20 (kLargeBuffer in MiB). PyTorch 2.11 on an H100 took
// max_split_size_mb:20 (memory_stats()'s max_split_size 20971520) and
// refused 8 ("CachingAllocator option max_split_size_mb too small, must be
// >= 20"): impl/gpu/testdata/cuda/refused*.jsonl.gz.
func TestMaxSplitSizeConfig(t *testing.T) {
	for _, tt := range []struct {
		size uint64
		ok   bool
	}{
		{0, true}, // unset: unlimited
		{21 * MiB, true},
		{1 << 40, true},
		{20 * MiB, true},
		{19 * MiB, false},
		{8 * MiB, false},
		{1, false},
		{21*MiB + 512, false},
	} {
		_, err := gpu.NewCaching(gpu.NewDevice(64*MiB, nil), gpu.CachingOptions{MaxSplitSize: tt.size})
		if (err == nil) != tt.ok || err != nil && !strings.Contains(err.Error(), "MaxSplitSize") {
			t.Errorf("MaxSplitSize %d: %v, want ok %v (an error naming MaxSplitSize)", tt.size, err, tt.ok)
		}
	}
}
