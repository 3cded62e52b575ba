package gpu

import (
	"cmp"
	"slices"
	"sort"

	"github.com/tlcheck/tlcheck/traces"
)

// Stream is a simulated CUDA stream; 0 is the default stream.
type Stream int

// block is a range of a segment: handed out (allocated), waiting for the
// events of the streams that used it (pending > 0), or free in its pool.
// The blocks of a segment are a doubly linked list by address that tiles
// the segment, as PyTorch's Block list does.
type block struct {
	addr       traces.Addr
	size       uint64
	requested  uint64 // the user's size before rounding; when free, the last user's (0 if none)
	stream     Stream // the stream it was allocated on; free blocks serve only it
	allocated  bool
	pending    int             // events not yet complete (record_stream)
	unmapped   bool            // expandable segments: bytes of the reservation not mapped
	uses       map[Stream]bool // streams other than its own that used it
	prev, next *block
	seg        *segment
}

// split reports whether the block is part of a segment with other blocks.
func (b *block) split() bool { return b.prev != nil || b.next != nil }

// segment is one cudaMalloc: the blocks that tile it start at head.
type segment struct {
	addr   traces.Addr
	size   uint64
	small  bool
	stream Stream
	head   *block
	resv   *Reservation // an expandable segment's reservation; nil for a cudaMalloc
}

// freeSet holds a pool's free blocks ordered by (stream, size, address),
// PyTorch's BlockComparatorSize, so that the first block not below
// (stream, size) is the best fit.
type freeSet struct {
	blocks   []*block
	unmapped []*block // expandable segments' unmapped blocks, by (stream, address)
}

// below reports whether b comes before the key (s, n, a).
func below(b *block, s Stream, n uint64, a traces.Addr) bool {
	if b.stream != s {
		return b.stream < s
	}
	if b.size != n {
		return b.size < n
	}
	return b.addr < a
}

// search returns the index of the first block not below (s, n, a).
func (f *freeSet) search(s Stream, n uint64, a traces.Addr) int {
	return sort.Search(len(f.blocks), func(i int) bool {
		return !below(f.blocks[i], s, n, a)
	})
}

func (f *freeSet) insert(b *block) {
	i := f.search(b.stream, b.size, b.addr)
	f.blocks = append(f.blocks, nil)
	copy(f.blocks[i+1:], f.blocks[i:])
	f.blocks[i] = b
}

// erase removes b, which must be in the set; it reports whether it was.
func (f *freeSet) erase(b *block) bool {
	i := f.search(b.stream, b.size, b.addr)
	if i < len(f.blocks) && f.blocks[i] == b {
		f.blocks = append(f.blocks[:i], f.blocks[i+1:]...)
		return true
	}
	return false
}

// Block states, as torch.cuda.memory_snapshot() names them.
const (
	StateAllocated   = "active_allocated"    // handed out
	StatePendingFree = "active_pending_free" // freed, waiting for a stream's events
	StateInactive    = "inactive"            // free in its pool
)

// BlockInfo is one block of a segment in a Snapshot.
type BlockInfo struct {
	Addr      traces.Addr
	Size      uint64
	Requested uint64 // requested_size: the user's size; for a free block, what its last user asked for (0 if none), as PyTorch leaves it
	State     string // StateAllocated, StatePendingFree or StateInactive
}

// SegmentInfo is one segment in a Snapshot, with its blocks in address
// order, as torch.cuda.memory_snapshot() describes a segment.
type SegmentInfo struct {
	Addr   traces.Addr
	Size   uint64 // total_size
	Small  bool   // segment_type "small" (else "large")
	Stream Stream
	Blocks []BlockInfo
	// Expandable: a contiguous mapped run of an expandable segment,
	// which PyTorch reports as a segment of its own (is_expandable).
	Expandable bool
}

// Snapshot returns every segment with its blocks, by address: the
// allocator's books as they are, for a checker to recount.
func (c *CachingAllocator) Snapshot() []SegmentInfo {
	out := make([]SegmentInfo, 0, len(c.segs))
	info := func(b *block) BlockInfo {
		state := StateInactive
		switch {
		case b.allocated:
			state = StateAllocated
		case b.pending > 0:
			state = StatePendingFree
		}
		return BlockInfo{b.addr, b.size, b.requested, state}
	}
	for _, seg := range c.segs {
		if seg.resv != nil {
			out = append(out, seg.mappedRuns(info)...)
			continue
		}
		si := SegmentInfo{Addr: seg.addr, Size: seg.size, Small: seg.small, Stream: seg.stream}
		for b := seg.head; b != nil; b = b.next {
			si.Blocks = append(si.Blocks, info(b))
		}
		out = append(out, si)
	}
	slices.SortFunc(out, func(x, y SegmentInfo) int { return cmp.Compare(x.Addr, y.Addr) })
	return out
}
