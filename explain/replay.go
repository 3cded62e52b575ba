package explain

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// player is one setting's replay.
type player struct {
	t      *trace
	ca     *gpu.CachingAllocator
	addr   map[traces.Addr]traces.Addr // the snapshot's block addresses, to the replay's
	ranOut int                         // the event at which a malloc failed; -1 before
	peakR  uint64
	peakA  uint64

	// The recorded setting's replay puts each segment where the snapshot
	// has it (the allocator breaks ties between free blocks of one size
	// by address, so a replay that agrees hands out the snapshot's
	// addresses): places are the snapshot's segment addresses not yet
	// taken, segs the replay's live segments, spare where a segment the
	// snapshot did not make goes.
	places []traces.Addr
	segs   map[traces.Addr]uint64
	spare  traces.Addr
	same   int // allocations at the snapshot's address
}

// spareBase is where the segments a snapshot did not make are placed:
// above the 47 bits of a CUDA address.
const spareBase = 1 << 48

// record hears of the replay's device events: its live segments.
func (p *player) record(ev traces.Event) {
	switch {
	case ev.Op == traces.OpDevMalloc && ev.Addr != 0:
		p.segs[ev.Addr] = ev.Size
	case ev.Op == traces.OpDevFree:
		delete(p.segs, ev.Addr)
	}
}

// place is the device's placement: the snapshot's next segment address
// where it is free, else a spare one.
func (p *player) place(size uint64) traces.Addr {
	if len(p.places) > 0 {
		a := p.places[0]
		p.places = p.places[1:]
		if p.vacant(a, size) {
			return a
		}
	}
	a := p.spare
	p.spare += traces.Addr((size + smallSegment - 1) / smallSegment * smallSegment)
	return a
}

// vacant reports whether no live segment of the replay meets [a, a+size).
func (p *player) vacant(a traces.Addr, size uint64) bool {
	if a == 0 || a%minBlock != 0 {
		return false
	}
	for s, n := range p.segs {
		if a < s+traces.Addr(n) && s < a+traces.Addr(size) {
			return false
		}
	}
	return true
}

func (p *player) note() {
	st := p.ca.Stats()
	p.peakR = max(p.peakR, uint64(st.ReservedBytes.All.Current))
	p.peakA = max(p.peakA, uint64(st.AllocatedBytes.All.Current))
}

func (p *player) malloc(e *event, at int) {
	if p.ranOut >= 0 {
		return
	}
	a, err := p.ca.Malloc(e.size, e.stream)
	if err != nil {
		p.ranOut = at
		return
	}
	p.addr[e.addr] = a
	if a == e.addr {
		p.same++
	}
	p.note()
}

// free frees a block the replay made; a free of what the snapshot never
// showed made (as the reader allows) frees nothing.
func (p *player) free(e *event, deferred bool) error {
	a, ok := p.addr[e.addr]
	if !ok || p.ranOut >= 0 {
		return nil
	}
	delete(p.addr, e.addr)
	if deferred {
		if err := p.ca.RecordStream(a, waiting); err != nil {
			return err
		}
	}
	return p.ca.Free(a)
}

// waiting is the stream a block the snapshot shows waiting is recorded
// on: no stream of the trace's, and synchronized only by the allocator's
// own release of its cache (and after it).
const waiting = gpu.Stream(1 << 30)

// completedInRelease reports whether the pool_put at i is a waiting
// block given back while the allocator freed its cache: a segment_free
// follows it before the next malloc or oom. PyTorch's release waits for
// every stream first, so such a block was still waiting when the malloc
// (or empty_cache) began, and it must wait in the replay too, until the
// replay's allocator frees its cache.
func (t *trace) completedInRelease(i int, ooms []torchsnap.OOM, next int) bool {
	if !t.events[i].pending {
		return false
	}
	for j := i + 1; j < len(t.events); j++ {
		if next < len(ooms) && ooms[next].Event <= j {
			return false
		}
		switch t.events[j].op {
		case traces.OpDevFree, traces.OpDevUnmap:
			return true
		case traces.OpPoolGet:
			return false
		}
	}
	return false
}

// replay runs the trace under s. The replay of the recorded setting also
// validates itself against the snapshot and explains the last oom entry.
//
// Segment entries are not replayed: the allocator reserves and returns
// segments itself, and a replay that agrees reserves what the snapshot's
// segments held after each run of them. A run of segment_free entries
// that a malloc's segment_alloc follows is the malloc freeing the cache
// under pressure, which the allocator does itself where the capacity is
// known; any other (torch.cuda.empty_cache(), or pressure on a device of
// unknown capacity) is replayed as EmptyCache where it happened.
func (t *trace) replay(s Setting, ex *Explanation, ooms []torchsnap.OOM, recorded bool, top int) (Outcome, error) {
	out := Outcome{Setting: s, Modelled: true, RanOutAt: -1}
	capacity := ex.Capacity
	capKnown := capacity > 0
	if !capKnown {
		capacity = unlimited
	}
	p := &player{t: t, addr: make(map[traces.Addr]traces.Addr), ranOut: -1, segs: make(map[traces.Addr]uint64), spare: spareBase}
	dev := gpu.NewDevice(capacity, p.record)
	if recorded {
		dev.PlaceWith(p.place)
	}
	ca, err := gpu.NewCaching(dev, gpu.CachingOptions{MaxSplitSize: s.MaxSplitSize, ExpandableSegments: s.ExpandableSegments})
	if err != nil {
		return out, err
	}
	p.ca = ca
	seed := t.seed
	if s.ExpandableSegments {
		seed = t.seedExpandable
	}
	exact, err := seed(p, recorded)
	if err != nil {
		return out, err
	}
	p.note()

	val := &Validation{Agrees: true}
	segs := map[traces.Addr]uint64{}
	var rec uint64 // what the snapshot's segments and mapped ranges hold
	for _, e := range t.events[:t.prelude] {
		switch e.op {
		case traces.OpDevMalloc:
			segs[e.addr] = e.size
		case traces.OpDevMap:
			rec += e.size
		}
	}
	live := map[traces.Addr]*event{} // the snapshot's live blocks, for the sites at an error
	for i := range t.events[:t.prelude] {
		if e := &t.events[i]; e.op == traces.OpPoolGet {
			live[e.addr] = e
		}
	}
	for _, n := range segs {
		rec += n
	}
	pending, released, remade := 0, false, false
	// A run of segment_free entries: what the segments held before it,
	// and what the segments made after it in the same run.
	var before, made uint64
	check := func(at int, what string) {
		val.Compared++
		val.Checked += pending
		pending = 0
		if got := ca.Device().Used(); val.Agrees && got != rec && p.ranOut < 0 {
			val.Agrees = false
			val.Disagreement = fmt.Sprintf("%s event %d: the replay reserves %d bytes, the snapshot's segments %d", what, at, got, rec)
		}
	}
	// settle replays a run of segment_free entries before the event at.
	settle := func(req *event) {
		// A malloc frees the cache itself, under pressure: when no cached
		// block could serve it and the segments it made would not have
		// fit beside what was held. Else the run was empty_cache().
		pressure := req != nil && remade && capKnown && before+made > capacity && !servable(ca, req, s.MaxSplitSize)
		if released && !pressure {
			ca.EmptyCache()
		}
		before, made = 0, 0
		released, remade = false, false
	}

	next := 0 // the next oom entry
	last := len(ooms) - 1
	for i := t.prelude; i <= len(t.events); i++ {
		for ; next < len(ooms) && ooms[next].Event <= i; next++ {
			o := &ooms[next]
			settle(nil)
			fits := false
			if p.ranOut < 0 {
				a, err := ca.Malloc(o.Size, t.streamOf(o.Stream))
				ca.Synchronize(waiting)
				fits = err == nil
				if fits {
					p.note()
					if next != last {
						ca.Free(a)
					}
				}
			}
			if recorded {
				if fits && val.Agrees {
					val.Agrees = false
					val.Disagreement = fmt.Sprintf("at the out-of-memory error before event %d: the replay served the request of %d bytes", o.Event, o.Size)
				}
				check(o.Event, "before")
			}
			if next == last {
				out.Fits = fits
				if recorded {
					ex.OOM = t.oomState(p, o, live, top)
				}
			}
		}
		if i == len(t.events) || next > last && last >= 0 {
			break // the snapshot was taken at its last error
		}
		e := &t.events[i]
		switch e.op {
		case traces.OpDevMalloc:
			segs[e.addr] = e.size
			rec += e.size
			pending++
			remade = remade || released
			if released {
				made += e.size
			}
			if recorded {
				p.places = append(p.places, e.addr)
			}
		case traces.OpDevFree:
			if !released {
				before = rec
			}
			rec -= segs[e.addr]
			delete(segs, e.addr)
			pending++
			released = true
		// An expandable segment's pages, mapped and unmapped, are
		// reserved as segments are: a run of unmaps is a release.
		case traces.OpDevMap:
			rec += e.size
			pending++
			remade = remade || released
			if released {
				made += e.size
			}
		case traces.OpDevUnmap:
			if !released {
				before = rec
			}
			rec -= e.size
			pending++
			released = true
		case traces.OpPoolGet:
			settle(e)
			p.malloc(e, i)
			ca.Synchronize(waiting) // what waited was given back, in a release or not at all
			val.Allocs++
			live[e.addr] = e
			if recorded {
				check(i, "after")
			}
		case traces.OpPoolPut:
			settle(nil)
			if err := p.free(e, t.completedInRelease(i, ooms, next)); err != nil {
				return out, fmt.Errorf("event %d: %w", i, err)
			}
			delete(live, e.addr)
			if recorded {
				check(i, "after")
			}
		}
	}
	out.PeakReserved, out.PeakAllocated, out.RanOutAt = p.peakR, p.peakA, p.ranOut
	if recorded {
		ex.SeedExact = exact
		val.SameAddress = p.same
		if pending > 0 && (last < 0 || next <= last) {
			settle(nil) // a run of segment_free entries at the end: empty_cache()
			check(len(t.events), "at the end, after")
		}
		if p.ranOut >= 0 && val.Agrees {
			val.Agrees = false
			val.Disagreement = fmt.Sprintf("event %d: the replay ran out of memory where the snapshot did not", p.ranOut)
		}
		ex.Validation = *val
	}
	return out, nil
}

// streamOf returns the replay stream of a snapshot's stream handle.
func (t *trace) streamOf(h int64) gpu.Stream {
	for i, s := range t.streams {
		if s == h {
			return gpu.Stream(i)
		}
	}
	return 0
}

// oomState is the explanation of an error from the replay's state.
func (t *trace) oomState(p *player, o *torchsnap.OOM, live map[traces.Addr]*event, top int) *OOM {
	st := p.ca.Stats()
	res := &OOM{Event: o.Event, Request: o.Size, Stream: o.Stream, Site: o.Site, Stack: stackOf(o), DeviceFree: o.DeviceFree,
		Allocated: uint64(st.AllocatedBytes.All.Current), Reserved: uint64(st.ReservedBytes.All.Current),
		Pools: t.poolsOf(p.ca), Sites: []SiteHeld{}}
	res.ReservedFree = res.Reserved - res.Allocated
	by := map[int32]*SiteHeld{}
	for _, e := range live {
		h := by[e.site]
		if h == nil {
			h = &SiteHeld{Site: t.sites[e.site]}
			by[e.site] = h
		}
		h.Blocks++
		h.Bytes += e.size
	}
	for _, h := range by {
		res.Sites = append(res.Sites, *h)
	}
	slices.SortFunc(res.Sites, func(a, b SiteHeld) int { return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.Site, b.Site)) })
	if len(res.Sites) > top {
		res.Sites = res.Sites[:top]
	}
	return res
}

// stackOf is an oom entry's stack, never nil.
func stackOf(o *torchsnap.OOM) []torchsnap.Frame {
	if o.Stack == nil {
		return []torchsnap.Frame{}
	}
	return o.Stack
}

// servable reports whether a cached block of the replay could serve
// the malloc req without a new segment, as get_free_block would find
// one: a free block of its pool and stream, large enough, and, with
// max_split_size, an oversize block only for an oversize request within
// kLargeBuffer (20 MiB) of it.
func servable(ca *gpu.CachingAllocator, req *event, maxSplit uint64) bool {
	n := gpu.RoundSize(req.size)
	small := n <= smallMax
	for _, sg := range ca.Snapshot() {
		if sg.Small != small || sg.Stream != req.stream {
			continue
		}
		for _, b := range sg.Blocks {
			if b.State != gpu.StateInactive || b.Size < n {
				continue
			}
			if maxSplit > 0 && b.Size >= maxSplit && (n < maxSplit || b.Size >= n+largeBuffer) {
				continue
			}
			return true
		}
	}
	return false
}

// largeBuffer is kLargeBuffer: 20 MiB.
const largeBuffer = 20 << 20
