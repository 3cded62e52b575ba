package properties

import (
	"fmt"

	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
)

// The caching allocator's choice of block, stated again from PyTorch's
// get_free_block, so that the property checks which block a malloc
// returns and not only that the books add up.

// fitRule is the block a malloc of size on stream s must be served from,
// found in before, the snapshot taken just before the call: the smallest
// free block of the request's pool (small up to 1 MiB rounded) and stream
// that holds the rounded size, the lowest address among equals; none if
// that block is oversize and the request is not (max_split_size), or if
// the request is oversize and the block 20 MiB or more above it. known is
// false when some block is pending on a stream's event: the malloc may
// first take it back (process_events) and merge it, which the snapshot
// cannot say.
func fitRule(before []gpu.SegmentInfo, size uint64, s gpu.Stream, maxSplit uint64) (best gpu.BlockInfo, found, known bool) {
	n := max(512, align512(size))
	small := n <= 1<<20
	for _, seg := range before {
		for _, b := range seg.Blocks {
			if b.State == gpu.StatePendingFree {
				return best, false, false
			}
			if seg.Small != small || seg.Stream != s || b.State != gpu.StateInactive || b.Size < n {
				continue
			}
			if !found || b.Size < best.Size || b.Size == best.Size && b.Addr < best.Addr {
				best, found = b, true
			}
		}
	}
	if found && maxSplit != 0 && (n < maxSplit && best.Size >= maxSplit || n >= maxSplit && best.Size >= n+20<<20) {
		found = false
	}
	return best, found, true
}

// segmentRule is the size of the segment a malloc of size reserves when
// no cached block serves it (get_allocation_size).
func segmentRule(size uint64) uint64 {
	n := max(512, align512(size))
	switch {
	case n <= 1<<20:
		return 2 << 20
	case n < 10<<20:
		return 20 << 20
	}
	return (n + 2<<20 - 1) &^ (2<<20 - 1)
}

// judgeFit says how the answer to a malloc of size on stream s breaks the
// rule of fitRule, or nothing: a is what Malloc returned (err its error),
// before and after the snapshots around the call. A request served by no
// cached block must get the start of a new segment of segmentRule's size.
func judgeFit(before, after []gpu.SegmentInfo, size uint64, s gpu.Stream, maxSplit uint64, a traces.Addr, err error) string {
	best, found, known := fitRule(before, size, s, maxSplit)
	switch {
	case !known || size >= gpu.MaxRequest:
		return ""
	case found && err != nil:
		return fmt.Sprintf("malloc of %d bytes on stream %d: %v, though the free block at %s (%d bytes) serves it", size, s, err, best.Addr, best.Size)
	case found && a != best.Addr:
		return fmt.Sprintf("malloc of %d bytes on stream %d got %s; want the free block at %s (%d bytes), the best fit", size, s, a, best.Addr, best.Size)
	case found || err != nil:
		return ""
	}
	for _, seg := range after {
		if seg.Addr == a {
			if seg.Size != segmentRule(size) {
				return fmt.Sprintf("malloc of %d bytes on stream %d got a new segment of %d bytes; want %d", size, s, seg.Size, segmentRule(size))
			}
			return ""
		}
	}
	return fmt.Sprintf("malloc of %d bytes on stream %d got %s, which starts no segment, though no free block serves it", size, s, a)
}
