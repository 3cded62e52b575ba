package torchsnap

import (
	"cmp"
	"maps"
	"slices"

	"github.com/tlcheck/tlcheck/traces"
)

// prelude makes the events of what was live when the trace began: a
// dev_malloc for each segment and a dev_map for each mapped range, by
// address, then a pool_get for each block.
//
// A thing made before recording began has no frames of its own where
// PyTorch kept none, but its neighbours in the snapshot's segments often
// name the site: a block without a site takes its segment's (the
// allocation that reserved it), and a segment or mapped range without one
// takes the site of the live block that holds the most of its bytes, so
// that a profile of reserved bytes by site names what holds them.
func (sh *shaper) prelude(segs map[uint64]live, mapped []span, blocks map[uint64]live) ([]traces.Event, []int32) {
	// What holds blocks, by address: segments (those of no bytes hold
	// none, but are events all the same) and mapped ranges.
	type holder struct {
		span
		seg bool
	}
	var holders, empty []holder
	for a, s := range segs {
		if s.size == 0 {
			empty = append(empty, holder{span{a, a, s.site}, true})
			continue
		}
		holders = append(holders, holder{spanOf(a, s.size, s.site), true})
	}
	for _, m := range mapped {
		holders = append(holders, holder{m, false})
	}
	slices.SortFunc(holders, func(a, b holder) int { return cmp.Compare(a.lo, b.lo) })

	addrs := slices.Sorted(maps.Keys(blocks))
	// The largest block with a site in each holder, for holders without one.
	best := make([]live, len(holders))
	for i := range best {
		best[i].site = -1
	}
	j := 0
	for _, a := range addrs {
		for j < len(holders) && holders[j].last < a {
			j++
		}
		if j == len(holders) || holders[j].lo > a {
			continue // in no holder: the model will say so
		}
		b := blocks[a]
		if b.site < 0 && holders[j].site >= 0 {
			blocks[a] = live{b.size, holders[j].site}
		} else if b.site >= 0 && b.size > best[j].size {
			best[j] = b
		}
	}
	for i := range holders {
		if holders[i].site < 0 {
			holders[i].site = best[i].site
		}
	}
	holders = append(holders, empty...)
	slices.SortStableFunc(holders, func(a, b holder) int { return cmp.Compare(a.lo, b.lo) })
	evs := make([]traces.Event, 0, len(holders)+len(blocks))
	stacks := make([]int32, 0, len(holders)+len(blocks)) // each event's stack (Reader.Stack)
	for _, h := range holders {
		ev := traces.Event{Op: traces.OpDevMap, Addr: traces.Addr(h.lo), Size: h.size(), HasSize: true, Site: sh.site(h.site)}
		if h.seg {
			ev.Op = traces.OpDevMalloc
			ev.Size = segs[h.lo].size
		}
		evs = append(evs, ev)
		stacks = append(stacks, h.site)
	}
	for _, a := range addrs {
		evs = append(evs, traces.Event{Op: traces.OpPoolGet, Addr: traces.Addr(a), Size: blocks[a].size, HasSize: true, Site: sh.site(blocks[a].site)})
		stacks = append(stacks, blocks[a].site)
	}
	return evs, stacks
}
