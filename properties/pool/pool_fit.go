package pool

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

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

// availableRule is what release_available_cached_blocks returns to the
// device for a request of n rounded bytes on stream s, from the snapshot
// before: the smallest free oversize block of the request's pool and
// stream of at least max(n, maxSplit) alone, else the largest ones, largest
// first, until they add up to that much; enough says whether they do.
// Nothing without maxSplit.
func availableRule(before []gpu.SegmentInfo, n uint64, s gpu.Stream, maxSplit uint64) (freed []gpu.SegmentInfo, enough bool) {
	if maxSplit == 0 {
		return nil, false
	}
	small := n <= 1<<20
	var oversize []gpu.SegmentInfo // whole free segments of maxSplit or more
	for _, seg := range before {
		if seg.Small == small && seg.Stream == s && len(seg.Blocks) == 1 && seg.Blocks[0].State == gpu.StateInactive && seg.Size >= maxSplit {
			oversize = append(oversize, seg)
		}
	}
	slices.SortFunc(oversize, func(a, b gpu.SegmentInfo) int {
		if a.Size != b.Size {
			return cmp.Compare(a.Size, b.Size)
		}
		return cmp.Compare(a.Addr, b.Addr)
	})
	want := max(n, maxSplit)
	if i := slices.IndexFunc(oversize, func(seg gpu.SegmentInfo) bool { return seg.Size >= want }); i >= 0 {
		return oversize[i : i+1], true
	}
	var sum uint64
	for i := len(oversize) - 1; i >= 0 && sum < want; i-- {
		freed = append(freed, oversize[i])
		sum += oversize[i].Size
	}
	return freed, sum >= want
}

// judgeRelease says how a malloc of size on stream s broke the rules of
// what it frees and retries, or nothing. before and after are the
// snapshots around it, retries the num_alloc_retries it added, a what it
// returned. With a cached block that serves it, or room on the device
// (capacity) for a new segment, nothing is freed or retried; else, with
// maxSplit set, release_available_cached_blocks frees availableRule's
// blocks, and if those are enough and make room, nothing else is freed and
// no retry counted; otherwise release_cached_blocks frees every segment
// free as a whole, with one retry.
func judgeRelease(before, after []gpu.SegmentInfo, retries int64, size uint64, s gpu.Stream, maxSplit, capacity uint64, a traces.Addr) string {
	_, found, known := fitRule(before, size, s, maxSplit)
	if !known || size >= gpu.MaxRequest {
		return ""
	}
	var used uint64
	var whole []gpu.SegmentInfo // what release_cached_blocks frees
	for _, seg := range before {
		used += seg.Size
		if len(seg.Blocks) == 1 && seg.Blocks[0].State == gpu.StateInactive {
			whole = append(whole, seg)
		}
	}
	need := segmentRule(size)
	var want []gpu.SegmentInfo
	wantRetries := int64(0)
	switch freed, enough := availableRule(before, max(512, align512(size)), s, maxSplit); {
	case found || capacity-used >= need:
	case enough && capacity-used+sumSizes(freed) >= need:
		want = freed
	default:
		want, wantRetries = whole, 1
	}
	gone := map[traces.Addr]uint64{}
	for _, seg := range before {
		gone[seg.Addr] = seg.Size
	}
	for _, seg := range after {
		if (found || seg.Addr != a) && gone[seg.Addr] == seg.Size { // a new segment may reuse a freed one's address
			delete(gone, seg.Addr)
		}
	}
	wantGone := map[traces.Addr]uint64{}
	for _, seg := range want {
		wantGone[seg.Addr] = seg.Size
	}
	if retries != wantRetries || !maps.Equal(gone, wantGone) {
		return fmt.Sprintf("malloc of %d bytes on stream %d (%d of %d bytes reserved, a new segment needs %d): freed segments %v with %d retries; want %v with %d",
			size, s, used, capacity, need, gone, retries, wantGone, wantRetries)
	}
	return ""
}

func sumSizes(segs []gpu.SegmentInfo) uint64 {
	var n uint64
	for _, seg := range segs {
		n += seg.Size
	}
	return n
}
