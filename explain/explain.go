package explain

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// Options configure Explain; the zero value replays DefaultSettings on
// a snapshot recorded under PyTorch's default setting.
type Options struct {
	// Recorded is the setting the snapshot was recorded under; nil takes
	// the snapshot's allocator_settings, or PyTorch's default where it has
	// none.
	Recorded *Setting
	// Settings are the what-ifs; nil tries DefaultSettings.
	Settings []Setting
	// Capacity is the bytes the process could reserve; 0 takes it from
	// the last oom entry, or, without one, runs without a limit.
	Capacity uint64
	// TopSites bounds OOM.Sites (default 10).
	TopSites int
}

// settingOf is the Setting of a snapshot's allocator_settings.
func settingOf(st torchsnap.Settings) Setting {
	s := Setting{MaxSplitSize: st.MaxSplitSize, ExpandableSegments: st.ExpandableSegments,
		GarbageCollectionThreshold: st.GarbageCollectionThreshold}
	var conf []string
	if s.MaxSplitSize > 0 {
		conf = append(conf, fmt.Sprintf("max_split_size_mb:%d", s.MaxSplitSize>>20))
	}
	if s.ExpandableSegments {
		conf = append(conf, "expandable_segments:True")
	}
	if s.GarbageCollectionThreshold > 0 {
		conf = append(conf, "garbage_collection_threshold:"+strconv.FormatFloat(s.GarbageCollectionThreshold, 'g', -1, 64))
	}
	s.Conf = strings.Join(conf, ",")
	return s
}

// unlimited is the capacity of a replay whose device is not known: more
// than any GPU holds.
const unlimited = 1 << 50

// Explain replays a snapshot's allocations and frees through impl/gpu's
// caching allocator under the recorded setting and each what-if, and
// explains its last out-of-memory error. Its error is the reader's, or a
// setting impl/gpu refuses (a max_split_size_mb under 20).
func Explain(r *torchsnap.Reader, opts Options) (*Explanation, error) {
	if opts.TopSites <= 0 {
		opts.TopSites = 10
	}
	if opts.Settings == nil {
		opts.Settings = DefaultSettings()
	}
	t, err := load(r)
	if err != nil {
		return nil, err
	}
	ex := &Explanation{Capacity: opts.Capacity, CapacityFrom: "given", Seeded: t.seedBlocks}
	switch st, ok := r.Settings(); {
	case opts.Recorded != nil:
		ex.Recorded, ex.RecordedFrom = *opts.Recorded, "given"
	case ok:
		ex.Recorded, ex.RecordedFrom = settingOf(st), "snapshot"
	default:
		ex.RecordedFrom = "default"
	}
	ooms := r.OOMs()
	switch {
	case opts.Capacity > 0:
	case len(ooms) > 0:
		last := ooms[len(ooms)-1]
		ex.Capacity, ex.CapacityFrom = t.reservedBefore(last.Event)+last.DeviceFree, "oom"
	default:
		ex.CapacityFrom = "unknown"
	}
	settings := append([]Setting{ex.Recorded}, opts.Settings...)
	for i, s := range settings {
		if i > 0 && s == ex.Recorded {
			continue // the recorded setting is replayed once, first
		}
		if why := s.unmodelled(); why != "" {
			ex.WhatIf = append(ex.WhatIf, Outcome{Setting: s, Why: why, RanOutAt: -1})
			if i == 0 {
				ex.Validation.Disagreement = "the recorded setting cannot be replayed: " + why
				if len(ooms) > 0 {
					o := ooms[len(ooms)-1]
					ex.OOM = &OOM{Event: o.Event, Request: o.Size, Stream: o.Stream, Site: o.Site, Stack: stackOf(&o), DeviceFree: o.DeviceFree,
						Pools: []Pool{}, Sites: []SiteHeld{}}
				}
			}
			continue
		}
		out, err := t.replay(s, ex, ooms, i == 0, opts.TopSites)
		if err != nil {
			return nil, fmt.Errorf("setting %s: %w", s, err)
		}
		ex.WhatIf = append(ex.WhatIf, out)
	}
	return ex, nil
}

// event is one event of the snapshot, as small as the replay needs.
type event struct {
	op      traces.Op
	pending bool // a pool_put whose block waited for another stream (torchsnap.Reader.Pending)
	stream  gpu.Stream
	site    int32
	addr    traces.Addr
	size    uint64
}

// trace is a snapshot's events in memory: the replays run over them
// once for each setting.
type trace struct {
	events     []event
	prelude    int // the events that make what was live before the trace began
	seedBlocks int
	sites      []string
	streams    []int64 // each replay stream's handle in the snapshot
	ooms       []torchsnap.OOM
}

func load(r *torchsnap.Reader) (*trace, error) {
	t := &trace{prelude: r.Stats().Prelude, ooms: r.OOMs()}
	siteN := map[string]int32{}
	streamN := map[string]gpu.Stream{"": 0}
	t.streams = []int64{0}
	var ev traces.Event
	for {
		err := r.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", r.Pos().Event, err)
		}
		e := event{op: ev.Op, addr: ev.Addr, size: ev.Size, pending: r.Pending(r.Pos().Event)}
		s, ok := streamN[ev.Thread]
		if !ok {
			h, _ := strconv.ParseInt(strings.TrimPrefix(ev.Thread, "stream "), 10, 64)
			s = gpu.Stream(len(t.streams))
			streamN[ev.Thread] = s
			t.streams = append(t.streams, h)
		}
		e.stream = s
		site, ok := siteN[ev.Site]
		if !ok {
			site = int32(len(t.sites))
			siteN[ev.Site] = site
			t.sites = append(t.sites, ev.Site)
		}
		e.site = site
		if len(t.events) < t.prelude && ev.Op == traces.OpPoolGet {
			t.seedBlocks++
		}
		t.events = append(t.events, e)
	}
	for _, o := range t.ooms { // a request's stream may have no other entry
		if !slices.Contains(t.streams, o.Stream) {
			t.streams = append(t.streams, o.Stream)
		}
	}
	return t, nil
}

// reservedBefore is what the snapshot's segments and expandable
// segments' mapped ranges held before event n.
func (t *trace) reservedBefore(n int) uint64 {
	segs := map[traces.Addr]uint64{}
	var rec uint64
	for _, e := range t.events[:min(n, len(t.events))] {
		switch e.op {
		case traces.OpDevMalloc:
			segs[e.addr] = e.size
			rec += e.size
		case traces.OpDevFree:
			rec -= segs[e.addr]
			delete(segs, e.addr)
		case traces.OpDevMap:
			rec += e.size
		case traces.OpDevUnmap:
			rec -= e.size
		}
	}
	return rec
}

// stream returns the snapshot's handle of a replay stream.
func (t *trace) stream(s gpu.Stream) int64 {
	if int(s) < len(t.streams) {
		return t.streams[s]
	}
	return int64(s)
}

// poolsOf sums a replay's cache by pool and stream.
func (t *trace) poolsOf(ca *gpu.CachingAllocator) []Pool {
	type key struct {
		small  bool
		stream gpu.Stream
	}
	by := map[key]*Pool{}
	for _, sg := range ca.Snapshot() {
		k := key{sg.Small, sg.Stream}
		p := by[k]
		if p == nil {
			p = &Pool{Pool: "large", Stream: t.stream(sg.Stream)}
			if sg.Small {
				p.Pool = "small"
			}
			by[k] = p
		}
		p.Segments++
		p.Reserved += sg.Size
		for _, b := range sg.Blocks {
			if b.State == gpu.StateInactive {
				p.Free += b.Size
				p.LargestFree = max(p.LargestFree, b.Size)
			}
		}
	}
	out := make([]Pool, 0, len(by))
	for _, p := range by {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Pool) int { return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Stream, b.Stream)) })
	return out
}
