package gpu

import (
	"slices"
	"sort"

	"github.com/tlcheck/tlcheck/traces"
)

// Expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,
// CachingOptions.ExpandableSegments), as CUDACachingAllocator.cpp does
// them: instead of a segment of a fixed size for each miss, each pool and
// stream reserves one range of addresses, 9/8 of the device's capacity
// (Device.Reserve), and maps pages of it as it grows: 2 MiB pages for the
// small pool, 20 MiB for the large one. Its blocks tile the whole range,
// mapped or not; unmapped blocks are kept apart from the free ones
// (BlockPool::unmapped, by stream and address).
//
//   - A miss maps, at the lowest address of the pool's stream where a free
//     mapped block and the unmapped bytes after it (or unmapped bytes
//     alone) make room, the pages the request still needs
//     (find_expandable_block, try_allocate_expandable_block, map_block);
//     the mapped bytes merge with their free mapped neighbours. A
//     reservation is made when no unmapped bytes of the stream's pool
//     make room.
//   - A block is split whenever the rest is at least 512 B, in both pools
//     (should_split).
//   - The best fit among free blocks breaks ties between blocks of one
//     size or more by the room each could grow into (get_free_block).
//   - Releasing (EmptyCache, the out-of-memory rounds) unmaps the whole
//     pages inside each free mapped block (release_blocks, unmap_block);
//     a reservation left wholly unmapped is given back. Oversize blocks
//     of expandable segments are not released by the max_split_size
//     round (release_available_cached_blocks skips them).
//
// Each map and unmap is recorded by the device as dev_map and dev_unmap;
// reserved bytes count mapped pages (num_device_alloc and num_device_free
// count maps and unmaps; the segment counters do not move).

// pageOf is the mapping granularity of a pool's expandable segments.
func pageOf(small bool) uint64 {
	if small {
		return SmallBuffer
	}
	return LargeBuffer
}

// searchUnmapped returns the index of the first unmapped block of pool
// not below (s, a), by stream and address.
func (f *freeSet) searchUnmapped(s Stream, a traces.Addr) int {
	return sort.Search(len(f.unmapped), func(i int) bool {
		b := f.unmapped[i]
		return b.stream > s || b.stream == s && b.addr >= a
	})
}

func (f *freeSet) insertUnmapped(b *block) {
	i := f.searchUnmapped(b.stream, b.addr)
	f.unmapped = slices.Insert(f.unmapped, i, b)
}

func (f *freeSet) eraseUnmapped(b *block) {
	i := f.searchUnmapped(b.stream, b.addr)
	if i < len(f.unmapped) && f.unmapped[i] == b {
		f.unmapped = slices.Delete(f.unmapped, i, i+1)
	}
}

// allocatable reports whether b can take part of a new allocation: free,
// waiting for no stream.
func allocatable(b *block) bool {
	return b != nil && !b.allocated && b.pending == 0 && len(b.uses) == 0
}

// findExpandable is find_expandable_block: the lowest-addressed chain of
// free and unmapped blocks of stream s with n bytes of room, starting at
// a free mapped block just before unmapped bytes or at unmapped bytes; a
// new reservation's unmapped block where there is none; nil when the
// device has no addresses left.
func (c *CachingAllocator) findExpandable(pool *freeSet, small bool, s Stream, n uint64) *block {
	room := func(b *block) bool {
		var got uint64
		for ; got < n && b != nil && (b.unmapped || allocatable(b)); b = b.next {
			got += b.size
		}
		return got >= n
	}
	for i := pool.searchUnmapped(s, 0); i < len(pool.unmapped) && pool.unmapped[i].stream == s; i++ {
		b := pool.unmapped[i]
		if b.prev != nil && !b.prev.unmapped && allocatable(b.prev) {
			b = b.prev
		}
		if room(b) {
			return b
		}
	}
	page := pageOf(small)
	size := roundUp(c.dev.capacity+c.dev.capacity/8, page)
	r, err := c.dev.Reserve(size)
	if err != nil {
		return nil
	}
	seg := &segment{addr: r.Addr, size: r.Size, small: small, stream: s, resv: r}
	b := &block{addr: r.Addr, size: r.Size, stream: s, seg: seg, unmapped: true}
	seg.head = b
	c.segs[seg.addr] = seg
	pool.insertUnmapped(b)
	return b
}

// allocExpandable is try_allocate_expandable_block: the chain that
// findExpandable found, mapped where it must be and merged into one free
// block of at least n bytes, taken out of its pool; nil when the device
// cannot map the pages.
func (c *CachingAllocator) allocExpandable(n uint64, small bool, s Stream) *block {
	pool := c.pool(small)
	b := c.findExpandable(pool, small, s, n)
	if b == nil {
		return nil
	}
	if b.unmapped {
		if b = c.mapBlock(pool, b, min(b.size, n)); b == nil {
			return nil
		}
	}
	for b.size < n {
		next := b.next // unmapped: the chain is free, then unmapped
		if b = c.mapBlock(pool, next, min(n-b.size, next.size)); b == nil {
			return nil
		}
	}
	pool.erase(b)
	return b
}

// mapBlock is map_block: map the pages that hold the first n bytes of the
// unmapped block u, leave the rest of u unmapped, and merge what was
// mapped with its free mapped neighbours. It returns the merged free
// block, in its pool, or nil (nothing changed) when the device is full.
func (c *CachingAllocator) mapBlock(pool *freeSet, u *block, n uint64) *block {
	page := pageOf(u.seg.small)
	m := min(roundUp(n, page), u.size)
	off := uint64(u.addr - u.seg.resv.Addr)
	if _, err := c.dev.DevMap(u.seg.resv, off, m); err != nil {
		return nil
	}
	pool.eraseUnmapped(u)
	u.unmapped = false
	if m < u.size {
		rest := c.newBlock()
		*rest = block{addr: u.addr + traces.Addr(m), size: u.size - m, stream: u.stream, seg: u.seg, unmapped: true, prev: u, next: u.next}
		if rest.next != nil {
			rest.next.prev = rest
		}
		u.next = rest
		u.size = m
		pool.insertUnmapped(rest)
	}
	c.merge(u, u.prev, pool)
	c.merge(u, u.next, pool)
	pool.insert(u)
	c.stats.NumDeviceAlloc++
	c.stats.ReservedBytes.add(u.seg.small, int64(m))
	return u
}

// unmapBlock is unmap_block: unmap the whole pages inside the free
// mapped block b, which is in its pool; the bytes before and after them
// stay free blocks of their own, and the unmapped block merges with its
// unmapped neighbours. It returns the unmapped block, or nil when b holds
// no whole page.
func (c *CachingAllocator) unmapBlock(pool *freeSet, b *block) *block {
	page := pageOf(b.seg.small)
	base := b.seg.resv.Addr
	lo := base + traces.Addr(roundUp(uint64(b.addr-base), page))
	hi := base + traces.Addr(uint64(b.addr-base+traces.Addr(b.size))/page*page)
	if lo >= hi {
		return nil
	}
	_ = c.dev.DevUnmap(b.seg.resv, uint64(lo-base), uint64(hi-lo)) // whole pages of ours, mapped
	pool.erase(b)
	if lo > b.addr {
		before := c.newBlock()
		*before = block{addr: b.addr, size: uint64(lo - b.addr), stream: b.stream, seg: b.seg, requested: b.requested, prev: b.prev, next: b}
		if before.prev != nil {
			before.prev.next = before
		} else {
			b.seg.head = before
		}
		b.prev = before
		pool.insert(before)
	}
	if end := b.addr + traces.Addr(b.size); hi < end {
		after := c.newBlock()
		*after = block{addr: hi, size: uint64(end - hi), stream: b.stream, seg: b.seg, requested: b.requested, prev: b, next: b.next}
		if after.next != nil {
			after.next.prev = after
		}
		b.next = after
		pool.insert(after)
	}
	b.addr, b.size, b.unmapped, b.requested = lo, uint64(hi-lo), true, 0
	c.merge(b, b.prev, pool)
	c.merge(b, b.next, pool)
	pool.insertUnmapped(b)
	c.stats.NumDeviceFree++
	c.stats.ReservedBytes.add(b.seg.small, -int64(hi-lo))
	return b
}

// releaseExpandable is release_blocks' part for expandable segments: it
// unmaps the whole pages of every free mapped block of pool, in the
// pool's order, and gives back each reservation left wholly unmapped.
func (c *CachingAllocator) releaseExpandable(pool *freeSet) {
	var todo []*block
	for _, b := range pool.blocks {
		if b.seg.resv != nil {
			todo = append(todo, b)
		}
	}
	for _, b := range todo {
		u := c.unmapBlock(pool, b)
		if u != nil && u.prev == nil && u.next == nil {
			pool.eraseUnmapped(u)
			_ = c.dev.Release(u.seg.resv) // wholly unmapped now
			delete(c.segs, u.seg.addr)
		}
	}
}

// expandableFit is get_free_block's tie-break under expandable segments:
// from the best fit at index i, it moves on past blocks of the same
// stream while the next one could grow into less room (its size and the
// unmapped bytes after it).
func (pool *freeSet) expandableFit(i int, s Stream) int {
	room := func(b *block) uint64 {
		if b.next != nil && b.next.unmapped {
			return b.size + b.next.size
		}
		return b.size
	}
	for pool.blocks[i].seg.resv != nil && i+1 < len(pool.blocks) && pool.blocks[i+1].stream == s && room(pool.blocks[i+1]) < room(pool.blocks[i]) {
		i++
	}
	return i
}

// mappedRuns returns the segments of an expandable segment as
// torch.cuda.memory_snapshot() reports them: one for each contiguous
// mapped run of its blocks.
func (seg *segment) mappedRuns(info func(b *block) BlockInfo) []SegmentInfo {
	var out []SegmentInfo
	open := false // the last of out is the run b continues
	for b := seg.head; b != nil; b = b.next {
		if b.unmapped {
			open = false
			continue
		}
		if !open {
			out = append(out, SegmentInfo{Addr: b.addr, Small: seg.small, Stream: seg.stream, Expandable: true})
			open = true
		}
		cur := &out[len(out)-1]
		cur.Size += b.size
		cur.Blocks = append(cur.Blocks, info(b))
	}
	return out
}
