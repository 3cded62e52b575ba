package gpu

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// PyTorch's constants (CUDACachingAllocator.cpp).
const (
	MinBlockSize  = 512      // kMinBlockSize: every size is rounded up to a multiple
	SmallSize     = 1 << 20  // kSmallSize: requests up to this go to the small pool
	SmallBuffer   = 2 << 20  // kSmallBuffer: the small pool's segment size
	LargeBuffer   = 20 << 20 // kLargeBuffer: the large pool's segment size for requests below MinLargeAlloc
	MinLargeAlloc = 10 << 20 // kMinLargeAlloc: from here a segment is the request rounded up to RoundLarge
	RoundLarge    = 2 << 20  // kRoundLarge

	// MaxRequest is 1 EiB: PyTorch's CUDA allocator refuses a request of
	// this size or more with an out-of-memory error before its caching
	// allocator sees it, so nothing is freed, retried or counted.
	MaxRequest = 1 << 60
)

// CachingOptions configure a CachingAllocator. The zero value is
// PyTorch's default configuration with no fault.
type CachingOptions struct {
	// MaxSplitSize is PYTORCH_CUDA_ALLOC_CONF's max_split_size_mb, in
	// bytes: blocks of at least this size are never split, and a cached
	// one serves only requests within LargeBuffer of its size. 0 means
	// unlimited, PyTorch's default; otherwise, as in PyTorch 2.11, it is a
	// whole number of MiB of at least 20 (LargeBuffer: PyTorch says
	// "max_split_size_mb too small, must be >= 20"), and NewCaching
	// refuses anything else.
	MaxSplitSize uint64
	// ExpandableSegments is PYTORCH_CUDA_ALLOC_CONF's
	// expandable_segments:True: each pool and stream maps pages of one
	// reservation as it grows instead of reserving segments
	// (expandable.go).
	ExpandableSegments bool
	Faults             []impl.Fault // pool faults of impl.Catalog to switch on
}

// CachingAllocator is PyTorch's CUDA caching allocator on a simulated
// Device; see the package comment for its rules. It is not safe for
// concurrent use.
type CachingAllocator struct {
	dev          *Device
	maxSplit     uint64
	expandable   bool
	small, large freeSet
	live         map[traces.Addr]*block // blocks handed out, by address
	segs         map[traces.Addr]*segment
	events       []event
	gen          map[Stream]uint64 // how many times each stream was synchronized
	stats        Stats
	f            faults
	spare        []*block // blocks merged away, for the next split: a split in steady state allocates nothing
}

// event is a CUDA event recorded on a stream when a block that stream used
// was freed: it completes when the stream is next synchronized.
type event struct {
	b      *block
	stream Stream
	gen    uint64
}

// NewCaching returns a caching allocator on dev. It refuses a fault the
// catalog lacks and a MaxSplitSize that PyTorch's configuration refuses.
func NewCaching(dev *Device, opts CachingOptions) (*CachingAllocator, error) {
	f, err := parseFaults(opts.Faults)
	if err != nil {
		return nil, err
	}
	if m := opts.MaxSplitSize; m != 0 && (m < LargeBuffer || m%(1<<20) != 0) {
		return nil, fmt.Errorf("gpu: CachingOptions.MaxSplitSize %d: max_split_size_mb must be a whole number of MiB, at least %d", m, LargeBuffer>>20)
	}
	c := &CachingAllocator{
		dev: dev, maxSplit: opts.MaxSplitSize, expandable: opts.ExpandableSegments, f: f,
		live: map[traces.Addr]*block{}, segs: map[traces.Addr]*segment{}, gen: map[Stream]uint64{},
	}
	if c.maxSplit == 0 {
		c.maxSplit = math.MaxUint64
	}
	return c, nil
}

// RoundSize is PyTorch's round_size: at least MinBlockSize, a multiple of it.
func RoundSize(n uint64) uint64 {
	if n < MinBlockSize {
		return MinBlockSize
	}
	return roundUp(n, MinBlockSize)
}

// AllocationSize is PyTorch's get_allocation_size: the segment a rounded
// request that finds no cached block makes the allocator reserve.
func AllocationSize(n uint64) uint64 {
	switch {
	case n <= SmallSize:
		return SmallBuffer
	case n < MinLargeAlloc:
		return LargeBuffer
	}
	return roundUp(n, RoundLarge)
}

func (c *CachingAllocator) pool(small bool) *freeSet {
	if small {
		return &c.small
	}
	return &c.large
}

// Malloc returns a block of at least size bytes for use on stream s,
// recorded as pool_get (and dev_malloc for a new segment). Malloc(0)
// returns NULL and records nothing, as PyTorch's does; a size of
// MaxRequest or more is an *OutOfMemoryError at once. When no cached block
// fits and the device cannot hold a new segment, it frees cached blocks as
// PyTorch's malloc does, in two rounds: with max_split_size set, first
// only oversize ones, as many as the request needs
// (release_available_cached_blocks: no retry counted, no stream waited
// for); then every segment free as a whole, after waiting for every
// stream (release_cached_blocks, one retry counted). Then it returns an
// *OutOfMemoryError.
func (c *CachingAllocator) Malloc(size uint64, s Stream) (traces.Addr, error) {
	if size >= MaxRequest {
		return 0, &OutOfMemoryError{Op: "Malloc", Requested: size, Capacity: c.dev.capacity, Free: c.dev.capacity - c.dev.used,
			Allocated: uint64(c.stats.AllocatedBytes.All.Current), Reserved: uint64(c.stats.ReservedBytes.All.Current), OverLimit: true}
	}
	if size == 0 {
		return 0, nil
	}
	c.processEvents()
	n := RoundSize(size)
	small := n <= SmallSize
	pool := c.pool(small)
	b := c.freeBlock(pool, s, n)
	if b == nil {
		b = c.allocBlock(n, small, s, false)
	}
	if b == nil && !c.f.releaseWhole && c.releaseAvailable(pool, s, n) {
		b = c.allocBlock(n, small, s, false)
	}
	if b == nil && c.releaseCached() {
		b = c.allocBlock(n, small, s, true)
	}
	if b == nil {
		c.stats.NumOOMs++
		// PyTorch's message names the segment it tried to reserve
		// (alloc_size), not the rounded request.
		return 0, &OutOfMemoryError{Op: "Malloc", Requested: AllocationSize(n), Capacity: c.dev.capacity, Free: c.dev.capacity - c.dev.used,
			Allocated: uint64(c.stats.AllocatedBytes.All.Current), Reserved: uint64(c.stats.ReservedBytes.All.Current)}
	}
	c.hand(b, pool, n, size)
	return b.addr, nil
}

// freeBlock is get_free_block: the best fit of the pool on stream s, or
// nil. With max_split_size set, an oversize block serves only requests of
// oversize too, within LargeBuffer of its size.
func (c *CachingAllocator) freeBlock(pool *freeSet, s Stream, n uint64) *block {
	i := pool.search(s, n, 0)
	if i == len(pool.blocks) || pool.blocks[i].stream != s {
		return nil
	}
	if c.f.worstFit { // the largest block of the stream, not the first that fits
		i = pool.search(s+1, 0, 0) - 1
	}
	if c.expandable {
		i = pool.expandableFit(i, s)
	}
	b := pool.blocks[i]
	if n < c.maxSplit && b.size >= c.maxSplit {
		return nil
	}
	if n >= c.maxSplit && b.size >= n+LargeBuffer {
		return nil
	}
	pool.blocks = slices.Delete(pool.blocks, i, i+1)
	return b
}

// allocBlock is alloc_block: for a rounded request of n bytes, a new
// segment (AllocationSize(n)), as one block not in any pool, or under
// expandable segments a block of at least n bytes mapped for it.
func (c *CachingAllocator) allocBlock(n uint64, small bool, s Stream, retry bool) *block {
	if retry {
		c.stats.NumAllocRetries++
	}
	if c.expandable {
		return c.allocExpandable(n, small, s)
	}
	n = AllocationSize(n)
	a, err := c.dev.DevMalloc(n)
	if err != nil {
		return nil
	}
	seg := &segment{addr: a, size: n, small: small, stream: s}
	b := &block{addr: a, size: n, stream: s, seg: seg}
	seg.head = b
	c.segs[a] = seg
	c.stats.NumDeviceAlloc++
	c.stats.Segment.add(small, 1)
	c.stats.ReservedBytes.add(small, int64(n))
	return b
}

// shouldSplit is should_split: the small pool splits off any remainder of
// a block, the large pool only one of more than SmallSize, and never an
// oversize block.
func (c *CachingAllocator) shouldSplit(b *block, n uint64) bool {
	rest := b.size - n
	if b.seg.small || c.expandable {
		return rest >= MinBlockSize
	}
	return n < c.maxSplit && rest > SmallSize
}

// hand is alloc_found_block: split b if it should be, the allocation
// taking the low addresses, and hand it out.
func (c *CachingAllocator) hand(b *block, pool *freeSet, n, requested uint64) {
	small := b.seg.small
	wasSplit := b.split()
	if c.shouldSplit(b, n) {
		rest := c.newBlock()
		// PyTorch's remainder is the block it found, so it keeps that
		// block's leftover requested_size (see release).
		*rest = block{addr: b.addr + traces.Addr(n), size: b.size - n, requested: b.requested, stream: b.stream, seg: b.seg, prev: b, next: b.next}
		b.size = n
		if !c.f.lostRemainder {
			if rest.next != nil {
				rest.next.prev = rest
			}
			b.next = rest
			pool.insert(rest)
		}
		if wasSplit {
			c.stats.InactiveSplitBytes.add(small, -int64(n))
		} else {
			c.stats.InactiveSplitBytes.add(small, int64(rest.size))
			c.stats.InactiveSplit.add(small, 1)
		}
	} else if wasSplit {
		c.stats.InactiveSplitBytes.add(small, -int64(b.size))
		c.stats.InactiveSplit.add(small, -1)
	}
	b.allocated, b.requested = true, requested
	c.live[b.addr] = b
	c.stats.Allocation.add(small, 1)
	c.stats.AllocatedBytes.add(small, int64(b.size))
	c.stats.Active.add(small, 1)
	c.stats.ActiveBytes.add(small, int64(b.size))
	c.stats.RequestedBytes.add(small, int64(requested))
	c.dev.emit(traces.Event{Op: traces.OpPoolGet, Addr: b.addr, Size: b.size})
}

// Free gives the block at a back, recorded as pool_put. A block that
// other streams used (RecordStream) stays out of the pool until each of
// them is synchronized. Free(0) does nothing. An address that is not a
// block handed out is an error, recorded all the same so that replaying
// the trace flags the same event.
func (c *CachingAllocator) Free(a traces.Addr) error {
	if a == 0 {
		return nil
	}
	c.dev.emit(traces.Event{Op: traces.OpPoolPut, Addr: a})
	b := c.live[a]
	if b == nil {
		return fmt.Errorf("gpu: Free(%s): not a block handed out by Malloc", a)
	}
	delete(c.live, a)
	b.allocated = false
	small := b.seg.small
	c.stats.Allocation.add(small, -1)
	if c.f.statsDrift {
		c.stats.AllocatedBytes.add(small, -int64(b.requested))
	} else {
		c.stats.AllocatedBytes.add(small, -int64(b.size))
	}
	if len(b.uses) == 0 {
		c.release(b)
		return nil
	}
	for _, s := range sortedStreams(b.uses) {
		c.events = append(c.events, event{b, s, c.gen[s]})
		b.pending++
	}
	b.uses = nil
	return nil
}

func sortedStreams(m map[Stream]bool) []Stream {
	out := make([]Stream, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// release is free_block: merge b with its free neighbours and put it in
// its pool.
func (c *CachingAllocator) release(b *block) {
	small := b.seg.small
	pool := c.pool(small)
	size, requested := b.size, b.requested
	var splits, splitBytes int64
	for _, nb := range [2]*block{b.prev, b.next} {
		if n := c.merge(b, nb, pool); n > 0 {
			splits--
			splitBytes -= int64(n)
		}
	}
	// b.requested stays: PyTorch leaves the last user's size on a free
	// block, and memory_snapshot() shows it.
	pool.insert(b)
	if b.split() {
		splits++
		splitBytes += int64(b.size)
	}
	c.stats.InactiveSplit.add(small, splits)
	c.stats.InactiveSplitBytes.add(small, splitBytes)
	c.stats.Active.add(small, -1)
	c.stats.ActiveBytes.add(small, -int64(size))
	c.stats.RequestedBytes.add(small, -int64(requested))
}

// merge is try_merge_blocks: src, a neighbour of dst, is absorbed if it is
// free and waits for no event. It returns the bytes absorbed.
func (c *CachingAllocator) merge(dst, src *block, pool *freeSet) uint64 {
	if src == nil || src.allocated || src.pending > 0 || src.unmapped != dst.unmapped || c.f.noMerge {
		return 0
	}
	if dst.prev == src {
		dst.addr = src.addr
		dst.prev = src.prev
		if dst.prev != nil {
			dst.prev.next = dst
		}
		if dst.seg.head == src {
			dst.seg.head = dst
		}
	} else {
		dst.next = src.next
		if dst.next != nil {
			dst.next.prev = dst
		}
	}
	dst.size += src.size
	if src.unmapped {
		pool.eraseUnmapped(src)
	} else {
		pool.erase(src)
	}
	n := src.size
	*src = block{}
	c.spare = append(c.spare, src)
	return n
}

// newBlock returns a spare block, or a new one.
func (c *CachingAllocator) newBlock() *block {
	if k := len(c.spare); k > 0 {
		b := c.spare[k-1]
		c.spare = c.spare[:k-1]
		return b
	}
	return new(block)
}

// RecordStream marks the block at a as used by stream s, as
// torch.Tensor.record_stream does: when it is freed, it is not reused
// until s is synchronized.
func (c *CachingAllocator) RecordStream(a traces.Addr, s Stream) error {
	b := c.live[a]
	if b == nil {
		return fmt.Errorf("gpu: RecordStream(%s, %d): not a block handed out by Malloc", a, s)
	}
	if s != b.stream {
		if b.uses == nil {
			b.uses = map[Stream]bool{}
		}
		b.uses[s] = true
	}
	c.dev.emit(traces.Event{Op: traces.OpRecordStream, Addr: a, Stream: uint64(s)})
	return nil
}

// Synchronize completes the work queued on stream s so far: the events
// recorded on it before now are complete. The allocator notices at the
// next Malloc or EmptyCache, as PyTorch's process_events does.
func (c *CachingAllocator) Synchronize(s Stream) { c.gen[s]++ }

// processEvents is process_events: blocks whose last event is complete
// go back to their pool. PyTorch keeps the events in a hash map from
// stream to a queue (cuda_events) and goes through it stream by stream,
// each stream's events in the order they were recorded. The order of the
// streams is the hash map's, which hangs on the CUDA stream handles; this
// takes them from the highest stream number down, the order PyTorch 2.11
// showed for streams 1 and 2 on an H100 (impl/gpu/testdata/cuda). Only
// the inactive_split counters' totals (allocated, freed, peak) can tell
// one order from another: blocks that merge end up the same either way.
func (c *CachingAllocator) processEvents() {
	if len(c.events) > 1 {
		slices.SortStableFunc(c.events, func(a, b event) int { return cmp.Compare(b.stream, a.stream) })
	}
	kept := c.events[:0]
	for _, ev := range c.events {
		if c.gen[ev.stream] <= ev.gen {
			kept = append(kept, ev)
			continue
		}
		ev.b.pending--
		if ev.b.pending == 0 {
			c.release(ev.b)
		}
	}
	clear(c.events[len(kept):])
	c.events = kept
}

// Stats returns the counters of torch.cuda.memory_stats().
func (c *CachingAllocator) Stats() Stats { return c.stats }

// Device returns the device the allocator reserves its segments on.
func (c *CachingAllocator) Device() *Device { return c.dev }
