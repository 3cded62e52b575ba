package explain

import (
	"sort"

	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
)

// Sizes of PyTorch's caching allocator that seeding needs.
const (
	smallSegment = 2 << 20 // kSmallBuffer: a small pool's segment
	smallMax     = 1 << 20 // kSmallSize: the largest small-pool request
	minBlock     = 512     // kMinBlockSize
)

// seed makes, on a fresh allocator, what was live before the trace began:
// each segment the snapshot had then, in address order, with its blocks
// where the snapshot had them. A segment is made by the request that
// reserves exactly its size, freed, and carved again, low addresses
// first, into its blocks and fillers for the gaps between them, which
// are freed once every segment is carved. A block's extent runs to the next block where the gap
// is too small for the allocator to have split it off (a large pool
// splits off more than 1 MiB, a small pool 512 bytes or more). exact says
// every block landed at its segment's offset.
func (t *trace) seed(p *player, place bool) (exact bool, err error) {
	segs := t.preludeHolders(traces.OpDevMalloc)
	ca := p.ca
	exact = true
	var fillers []traces.Addr // freed once every segment is carved, so that none serves a later one
	for _, s := range segs {
		small := s.size == smallSegment
		req := s.size
		if small {
			req = minBlock
		}
		if gpu.AllocationSize(gpu.RoundSize(req)) != s.size {
			// No request reserves a segment of this size (one of
			// expandable segments, or of a snapshot no allocator wrote):
			// the replays go without it, and say they approximate.
			exact = false
			continue
		}
		if place {
			p.places = append(p.places[:0], s.addr)
		}
		base, err := ca.Malloc(req, 0)
		if err != nil {
			exact = false // the device cannot hold what was live: approximate
			continue
		}
		if err := ca.Free(base); err != nil {
			return false, err
		}
		splits := func(rest uint64) bool { // whether the allocator splits rest off
			if small {
				return rest >= minBlock
			}
			return rest > smallMax
		}
		fill := func(at, n uint64) {
			for n > 0 {
				c := n
				if small {
					c = min(n, smallMax)
				}
				a, err := ca.Malloc(c, 0)
				if err != nil || a != base+traces.Addr(at) {
					exact = false
				}
				if err == nil {
					fillers = append(fillers, a)
				}
				at, n = at+c, n-c
			}
		}
		at := uint64(0) // offset of the first byte not yet carved
		for k, b := range s.blocks {
			off := uint64(b.addr - s.addr)
			if off > at {
				fill(at, off-at)
			}
			end := s.size
			if k+1 < len(s.blocks) {
				end = uint64(s.blocks[k+1].addr - s.addr)
			}
			n := gpu.RoundSize(b.size)
			if off+n > end || !splits(end-off-n) {
				n = end - off
			}
			a, err := ca.Malloc(n, 0)
			if err != nil {
				exact = false
				break
			}
			if a != base+traces.Addr(off) {
				exact = false
			}
			p.addr[b.addr] = a
			at = off + n
		}
		if at < s.size {
			fill(at, s.size-at)
		}
	}
	for _, a := range fillers {
		if err := ca.Free(a); err != nil {
			return false, err
		}
	}
	return exact, nil
}

// holder is what holds blocks in the snapshot before the trace began (a
// segment, or an expandable segment's mapped range) and the blocks it
// held, in address order.
type holder struct {
	addr   traces.Addr
	size   uint64
	blocks []*event
}

// preludeHolders groups the prelude's blocks by the holders op makes
// (dev_malloc's segments or dev_map's ranges), in address order; a block
// in none is left out, the model's to report.
func (t *trace) preludeHolders(op traces.Op) []*holder {
	var hs []*holder
	for i := range t.events[:t.prelude] {
		e := &t.events[i]
		switch e.op {
		case op:
			hs = append(hs, &holder{addr: e.addr, size: e.size})
		case traces.OpPoolGet:
			j := sort.Search(len(hs), func(j int) bool { return hs[j].addr+traces.Addr(hs[j].size) > e.addr })
			if j == len(hs) || e.addr < hs[j].addr {
				continue
			}
			hs[j].blocks = append(hs[j].blocks, e)
		}
	}
	return hs
}
