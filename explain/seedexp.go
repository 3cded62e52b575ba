package explain

import (
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
)

// seedExpandable is seed under expandable segments: what was live before
// the trace began lies in mapped ranges of expandable segments (the
// prelude's dev_map events), which no request maps one by one. Each range
// is carved, in address order, into its blocks and fillers for the gaps
// between them, low addresses first, so that the allocator maps the
// range's pages as it grows; the fillers are freed once every range is
// carved. The allocator reserves its own addresses, so blocks land at
// other addresses than the snapshot's, and what is mapped matches only
// where each range is one pool's: a range holding a small block (a
// request of 1 MiB or less) is the small pool's, one holding none the
// large pool's, whose gaps of 1 MiB or less the block before them takes
// (a request that small would go to the small pool); a small range's
// gaps are filled 1 MiB at most at a time. exact says every block
// landed at the snapshot's address, as seed's does (rarely: the
// reservation's address is the allocator's).
func (t *trace) seedExpandable(p *player, _ bool) (exact bool, err error) {
	rngs := t.preludeHolders(traces.OpDevMap)
	ca := p.ca
	exact = true
	var fillers []traces.Addr
	for _, r := range rngs {
		small := len(r.blocks) > 0 && r.blocks[0].size <= smallMax
		if len(r.blocks) == 0 && r.size%gpu.LargeBuffer != 0 {
			small = true // no block says; only a small range has this size
		}
		// pieces are the range's blocks and gaps, in address order, as
		// requests of the range's pool: a large range's small gap goes to
		// the piece before it (or, first, after it).
		type piece struct {
			size  uint64
			block *event // nil for a filler
		}
		var pieces []piece
		add := func(n uint64, b *event) {
			if n == 0 {
				return
			}
			if small && b == nil && n > smallMax {
				// a small range's gap: fillers the small pool serves
				for ; n > 0; n -= min(n, smallMax) {
					pieces = append(pieces, piece{min(n, smallMax), nil})
				}
				return
			}
			if !small && n <= smallMax && b == nil && len(pieces) > 0 {
				pieces[len(pieces)-1].size += n
				return
			}
			if !small && len(pieces) == 1 && pieces[0].block == nil && pieces[0].size <= smallMax {
				n += pieces[0].size // a small gap first: the first block takes it
				pieces = pieces[:0]
			}
			pieces = append(pieces, piece{n, b})
		}
		at := uint64(0)
		for k, b := range r.blocks {
			off := uint64(b.addr - r.addr)
			if off < at {
				exact = false // blocks overlap: not a snapshot an allocator wrote
				continue
			}
			add(off-at, nil)
			end := r.size
			if k+1 < len(r.blocks) {
				end = uint64(r.blocks[k+1].addr - r.addr)
			}
			n := min(gpu.RoundSize(b.size), end-off)
			if end-off-n < minBlock {
				n = end - off // too little left to split off
			}
			add(n, b)
			at = off + n
		}
		add(r.size-at, nil)
		for _, pc := range pieces {
			if (pc.size <= smallMax) != small {
				exact = false // the piece goes to the other pool
			}
			a, err := ca.Malloc(pc.size, 0)
			if err != nil {
				exact = false // the device cannot hold what was live: approximate
				continue
			}
			if pc.block == nil {
				fillers = append(fillers, a)
				continue
			}
			p.addr[pc.block.addr] = a
			if a != pc.block.addr {
				exact = false // the allocator reserved addresses of its own
			}
		}
	}
	for _, a := range fillers {
		if err := ca.Free(a); err != nil {
			return false, err
		}
	}
	return exact, nil
}
