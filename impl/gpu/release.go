package gpu

import (
	"math"
	"slices"
)

// How the caching allocator gives segments back to the device: when asked
// (EmptyCache) and when a malloc finds the device full (Malloc's two
// rounds, release_available_cached_blocks and release_cached_blocks).

// EmptyCache is torch.cuda.empty_cache(): it waits for every pending
// event and returns every cached segment that is free as a whole to the
// device.
func (c *CachingAllocator) EmptyCache() { c.releaseCached() }

// releaseCached is release_cached_blocks; it reports whether it ran (it
// always does: PyTorch's returns false only while a CUDA graph is being
// captured, which this simulation has no notion of).
func (c *CachingAllocator) releaseCached() bool {
	for _, ev := range c.events {
		c.gen[ev.stream] = max(c.gen[ev.stream], ev.gen+1)
	}
	c.processEvents()
	for _, pool := range []*freeSet{&c.small, &c.large} {
		var whole []*block
		for _, b := range pool.blocks {
			if b.seg.resv == nil && !b.split() && b.seg.head == b && b.size == b.seg.size {
				whole = append(whole, b)
			}
		}
		for _, b := range whole {
			pool.erase(b)
			c.releaseSegment(b.seg)
		}
		c.releaseExpandable(pool)
	}
	return true
}

// releaseAvailable is release_available_cached_blocks: with max_split_size
// set, it returns cached oversize blocks of the request's pool and stream
// to the device, only as many as a request of n bytes needs: the smallest
// one of at least max(n, max_split_size) if there is one, else the
// largest ones, largest first, until their sizes add up to that much. It
// waits for no stream, so a block pending on another stream stays
// pending. It reports whether it freed enough; when it did not, the
// blocks it freed stay freed, as in PyTorch. Every oversize free block is
// a segment of its own: a large-pool block handed out is over SmallSize,
// so a free part of a split segment is below max_split_size.
func (c *CachingAllocator) releaseAvailable(pool *freeSet, s Stream, n uint64) bool {
	if c.maxSplit == math.MaxUint64 {
		return false
	}
	want := max(n, c.maxSplit)
	i := pool.search(s, want, 0)
	if i < len(pool.blocks) && pool.blocks[i].stream == s && pool.blocks[i].seg.resv == nil {
		c.releaseWhole(pool, i)
		return true
	}
	var freed uint64
	for j := i - 1; j >= 0 && freed < want; j-- {
		b := pool.blocks[j]
		if b.stream != s || b.size < c.maxSplit {
			break
		}
		if b.seg.resv != nil {
			continue // an expandable segment's: never released here
		}
		freed += b.size
		c.releaseWhole(pool, j)
	}
	return freed >= want
}

// releaseWhole is release_block: the free block at index i of pool, a
// whole segment, goes back to the device.
func (c *CachingAllocator) releaseWhole(pool *freeSet, i int) {
	b := pool.blocks[i]
	pool.blocks = slices.Delete(pool.blocks, i, i+1)
	c.releaseSegment(b.seg)
}

func (c *CachingAllocator) releaseSegment(seg *segment) {
	_ = c.dev.DevFree(seg.addr) // a segment of ours is always live on the device
	delete(c.segs, seg.addr)
	c.stats.NumDeviceFree++
	c.stats.Segment.add(seg.small, -1)
	c.stats.ReservedBytes.add(seg.small, -int64(seg.size))
}
