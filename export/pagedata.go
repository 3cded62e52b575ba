package export

import (
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"slices"

	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/model"
)

// What the page's script receives, as JSON. The timeline is aggregated
// here so that the page's size and the browser's work are bounded by
// maxPageBuckets and maxPageBands, whatever the trace: each band is one
// site's live bytes (the maxPageBands sites that held the most at the
// peak, then "other"), sampled per bucket at the moment the bucket's
// allocated total was highest, so that the bands stack to that total and
// the peak is drawn at its height. The lives themselves go as columns of
// varints, base64-encoded, which the page decodes only when a hover or a
// click asks for blocks.

// maxPageBuckets is the timeline's points per band: about a wide
// screen's pixels.
const maxPageBuckets = 1200

// maxPageBands is the sites drawn as bands of their own.
const maxPageBands = 12

type pageData struct {
	Space     string `json:"space"`     // "device" or "heap"
	Allocated string `json:"allocated"` // what the bands add up to
	Reserved  string `json:"reserved"`  // what the envelope is; "" for none
	// Time says that the trace has times: x is then a time in ns since
	// the first event's, else an event number.
	Time   bool       `json:"time"`
	Events int        `json:"events"`
	Bands  []pageBand `json:"bands"`
	// Timelines are the bands over time (where the trace has times) and
	// over events: a spike that lasts no time is wide by events.
	Timelines []pageTimeline `json:"timelines"`
	Peak      pagePeak       `json:"peak"`
	Marks     []pageMarkJ    `json:"marks"`
	Sites     []string       `json:"sites"`
	// Lives go in a JSON element of their own, which the page parses only
	// when it first needs blocks.
	Lives pageLives `json:"-"`
	// Cut is the event from which lives were no longer kept
	// (maxPageLives); -1 where all were.
	Cut    int         `json:"cut"`
	Extras *PageExtras `json:"extras,omitempty"`
}

// pageLives are the lives on the page: the allocated things (blocks) and
// the reserved (segments).
type pageLives struct {
	Blocks   pageColumns `json:"blocks"`
	Segments pageColumns `json:"segments"`
}

type pageBand struct {
	Site   int    `json:"site"` // an index of Sites; -1 for "other"
	AtPeak uint64 `json:"atPeak"`
	Max    uint64 `json:"max"`
}

// pageTimeline is the bands sampled over buckets of equal width in x.
type pageTimeline struct {
	Time     bool       `json:"time"` // x is ns since the first event; else events
	X0       float64    `json:"x0"`
	X1       float64    `json:"x1"`
	Sample   []int      `json:"sample"`             // per bucket: the event it shows
	Bytes    [][]uint64 `json:"bytes"`              // per band, per bucket
	Envelope []uint64   `json:"envelope,omitempty"` // per bucket: reserved's highest
}

type pagePeak struct {
	Bytes    uint64  `json:"bytes"`
	Event    int     `json:"event"`
	X        float64 `json:"x"`        // its time, ns since the first event's (timed traces)
	Reserved uint64  `json:"reserved"` // reserved's highest, over the trace
}

type pageMarkJ struct {
	Event   int     `json:"event"`
	X       float64 `json:"x"` // its time, ns since the first event's (timed traces)
	Kind    string  `json:"kind"`
	Message string  `json:"message"`
}

// pageColumns are lives, by birth, as columns: each a base64 string of
// varints (encoding/binary's; signed ones zig-zag):
//
//	born   uvarint, the event after the row before's
//	died   uvarint, died - born + 1; 0 while live at the end
//	size   uvarint, in units of Unit
//	addr   varint, after the row before's, in units of Unit
//	site   uvarint, an index of Sites
//	seg    uvarint, 1 + the row of the block's segment; 0 for none (blocks only)
//	bornT  varint, after the row before's, in units of UnitT ns (timed traces only)
//	diedT  uvarint, after bornT, in units of UnitT ns (timed traces only; 0 while live)
//
// The units (the largest power of two up to 4096 that divides every size
// and address; 1000 where every time is whole µs, as a snapshot's are)
// save a byte or two a row: the page's size is mostly these columns.
type pageColumns struct {
	N     int    `json:"n"`
	Unit  uint64 `json:"unit"`
	UnitT int64  `json:"unitT"`
	Born  string `json:"born"`
	Died  string `json:"died"`
	Size  string `json:"size"`
	Addr  string `json:"addr"`
	Site  string `json:"site"`
	Seg   string `json:"seg,omitempty"`
	BornT string `json:"bornT,omitempty"`
	DiedT string `json:"diedT,omitempty"`
}

// data aggregates what the builder heard; events is the trace's.
func (p *pageBuilder) data(events int) *pageData {
	d := &pageData{Space: "heap", Allocated: "live bytes", Events: events, Cut: p.cut, Extras: p.extras,
		Marks: []pageMarkJ{}, Bands: []pageBand{}} // [] rather than null for the script
	defer func() {
		for i := range d.Timelines {
			if d.Timelines[i].Bytes == nil {
				d.Timelines[i].Bytes = [][]uint64{}
			}
		}
	}()
	isAlloc, isRes := func(k model.ThingKind) bool { return k != model.Segment && k != model.PoolBlock }, func(model.ThingKind) bool { return false }
	if p.device {
		d.Space, d.Allocated, d.Reserved = "device", "allocated (blocks handed out)", "reserved (segments)"
		isAlloc = func(k model.ThingKind) bool { return k == model.PoolBlock }
		isRes = func(k model.ThingKind) bool { return k == model.Segment }
	}
	var alloc, res []int32 // lives, by birth
	for i := range p.lives {
		switch k := p.lives[i].kind; {
		case isAlloc(k):
			alloc = append(alloc, int32(i))
		case isRes(k):
			res = append(res, int32(i))
		}
	}
	d.Time = p.hasT && p.lastT() > p.firstT
	for _, m := range p.marks {
		d.Marks = append(d.Marks, pageMarkJ{Event: m.event, X: p.x(true, m.event, m.t), Kind: string(m.kind), Message: m.message})
	}
	d.Sites = make([]string, len(p.sites))
	for i, s := range p.sites {
		d.Sites[i] = safetext.Escape(s)
	}
	p.sweep(d, alloc, res)
	segRow := make(map[int32]int, len(res))
	for r, i := range res {
		segRow[i] = r
	}
	d.Lives.Segments = p.columns(res, nil, d.Time)
	d.Lives.Blocks = p.columns(alloc, segRow, d.Time)
	return d
}

// lastT is the latest time heard.
func (p *pageBuilder) lastT() int64 {
	t := p.firstT
	for i := range p.lives {
		t = max(t, p.lives[i].bornT, p.lives[i].diedT)
	}
	for _, m := range p.marks {
		t = max(t, m.t)
	}
	return t
}

// x places an event on a timeline by time or by event.
func (p *pageBuilder) x(time bool, event int, t int64) float64 {
	if time {
		return float64(max(t-p.firstT, 0))
	}
	return float64(event)
}

// change is a life's start or end, for the sweep.
type change struct {
	event int
	t     int64
	life  int32
	end   bool
}

// changes lists the starts and ends of lives in the order they happened:
// by event, an event's ends before its starts. A life that ends at the
// event that made it is never live after an event, and is left out.
func (p *pageBuilder) changes(lives []int32) []change {
	cs := make([]change, 0, 2*len(lives))
	for _, i := range lives {
		l := &p.lives[i]
		if l.died == l.born {
			continue
		}
		cs = append(cs, change{event: l.born, t: l.bornT, life: i})
		if l.died >= 0 {
			cs = append(cs, change{event: l.died, t: l.diedT, life: i, end: true})
		}
	}
	slices.SortStableFunc(cs, func(a, b change) int {
		if c := cmp.Compare(a.event, b.event); c != 0 {
			return c
		}
		if a.end != b.end {
			if a.end {
				return -1
			}
			return 1
		}
		return 0
	})
	return cs
}

// sweep fills d's timeline: the bands, the envelope, the peak.
func (p *pageBuilder) sweep(d *pageData, alloc, res []int32) {
	cs := p.changes(append(slices.Clone(alloc), res...))
	isRes := make(map[int32]bool, len(res))
	for _, i := range res {
		isRes[i] = true
	}

	// The first pass finds the peak and each site's highest.
	siteNow, siteMax := make([]uint64, len(p.sites)), make([]uint64, len(p.sites))
	var total, reserved uint64
	walk(cs, nil, func(c change) {
		l := &p.lives[c.life]
		switch {
		case isRes[c.life] && c.end:
			reserved -= l.size
		case isRes[c.life]:
			reserved += l.size
		case c.end:
			total -= l.size
			siteNow[l.site] -= l.size
		default:
			total += l.size
			siteNow[l.site] += l.size
			siteMax[l.site] = max(siteMax[l.site], siteNow[l.site])
		}
	}, func(event int, t int64) {
		if total > d.Peak.Bytes {
			d.Peak.Bytes, d.Peak.Event, d.Peak.X = total, event, p.x(true, event, t)
		}
		d.Peak.Reserved = max(d.Peak.Reserved, reserved)
	})

	// The bands: the sites that held the most at the peak, then by their
	// own highest.
	atPeak := make([]uint64, len(p.sites))
	for _, i := range alloc {
		l := &p.lives[i]
		if d.Peak.Bytes > 0 && l.born <= d.Peak.Event && (l.died < 0 || l.died > d.Peak.Event) {
			atPeak[l.site] += l.size
		}
	}
	order := make([]int, 0, len(p.sites))
	for s := range p.sites {
		if siteMax[s] > 0 {
			order = append(order, s)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(atPeak[b], atPeak[a]), cmp.Compare(siteMax[b], siteMax[a]))
	})
	other := min(len(order), maxPageBands)
	if len(order) == maxPageBands+1 {
		other++ // a band of its own rather than an "other" of one site
	}
	bandOf := make([]int, len(p.sites))
	for s := range bandOf {
		bandOf[s] = other
	}
	for b, s := range order[:other] {
		bandOf[s] = b
		d.Bands = append(d.Bands, pageBand{Site: s, AtPeak: atPeak[s], Max: siteMax[s]})
	}
	if len(order) > other {
		ob := pageBand{Site: -1}
		for _, s := range order[other:] {
			ob.AtPeak += atPeak[s]
			ob.Max += siteMax[s] // an upper bound; the page does not show it
		}
		d.Bands = append(d.Bands, ob)
	}

	if d.Time {
		// A little past the last time, so that the state after the last
		// event, which lasts no time, still shows.
		span := float64(p.lastT() - p.firstT)
		d.Timelines = append(d.Timelines, p.sample(cs, isRes, bandOf, len(d.Bands), true, span+span/50, len(res) > 0))
	}
	d.Timelines = append(d.Timelines, p.sample(cs, isRes, bandOf, len(d.Bands), false, float64(max(d.Events, 1)), len(res) > 0))
}

// sample makes a timeline over [0, x1] by time or by event, each bucket
// sampled at its highest total, with the reserved envelope where asked.
func (p *pageBuilder) sample(cs []change, isRes map[int32]bool, bandOf []int, bands int, time bool, x1 float64, envelope bool) pageTimeline {
	n := maxPageBuckets
	if !time {
		n = min(n, int(x1))
	}
	tl := pageTimeline{Time: time, X1: x1, Sample: make([]int, n)}
	for range bands {
		tl.Bytes = append(tl.Bytes, make([]uint64, n))
	}
	if envelope {
		tl.Envelope = make([]uint64, n)
	}
	bandNow := make([]uint64, bands+1) // one spare for "other" never made
	best := make([]uint64, n)          // each bucket's highest total so far
	set := make([]bool, n)
	cur := -1 // the bucket last written
	var total, reserved uint64
	record := func(b int, event int) {
		if !set[b] || total > best[b] {
			set[b], best[b], tl.Sample[b] = true, total, event
			for i := range bands {
				tl.Bytes[i][b] = bandNow[i]
			}
		}
		if envelope {
			tl.Envelope[b] = max(tl.Envelope[b], reserved)
		}
	}
	lastEvent := 0
	walk(cs, func(event int, t int64) {
		// The buckets up to this event's, its start included, hold the
		// value carried in.
		b := bucket(p.x(time, event, t), 0, x1, n)
		for i := cur + 1; i <= b; i++ {
			record(i, lastEvent)
		}
		cur = max(cur, b)
	}, func(c change) {
		l := &p.lives[c.life]
		switch {
		case isRes[c.life] && c.end:
			reserved -= l.size
		case isRes[c.life]:
			reserved += l.size
		case c.end:
			total -= l.size
			bandNow[bandOf[l.site]] -= l.size
		default:
			total += l.size
			bandNow[bandOf[l.site]] += l.size
		}
	}, func(event int, t int64) {
		record(bucket(p.x(time, event, t), 0, x1, n), event)
		lastEvent = event
	})
	for i := cur + 1; i < n; i++ {
		record(i, lastEvent)
	}
	return tl
}

// walk calls step for each change; before the first change of each event
// before (where not nil), and after its last after, with the event and
// its time.
func walk(cs []change, before func(event int, t int64), step func(change), after func(event int, t int64)) {
	for i, c := range cs {
		if before != nil && (i == 0 || cs[i-1].event != c.event) {
			before(c.event, c.t)
		}
		step(c)
		if i+1 == len(cs) || cs[i+1].event != c.event {
			after(c.event, c.t)
		}
	}
}

// bucket is the bucket of x, of n over [x0, x1].
func bucket(x, x0, x1 float64, n int) int {
	if x1 <= x0 {
		return 0
	}
	b := int((x - x0) / (x1 - x0) * float64(n))
	return min(max(b, 0), n-1)
}

// columns encodes lives as pageColumns. segRow maps a segment's life to
// its row of the segments' columns; nil for the segments themselves.
func (p *pageBuilder) columns(lives []int32, segRow map[int32]int, timed bool) pageColumns {
	unit, unitT := uint64(4096), int64(1000)
	for _, i := range lives {
		l := &p.lives[i]
		for unit > 1 && (l.size%unit != 0 || l.addr%unit != 0) {
			unit /= 2
		}
		if timed && ((l.bornT-p.firstT)%unitT != 0 || (l.died >= 0 && (l.diedT-p.firstT)%unitT != 0)) {
			unitT = 1
		}
	}
	var born, died, size, addr, site, seg, bornT, diedT []byte
	var prevBorn int
	var prevAddr uint64
	var prevT int64
	for _, i := range lives {
		l := &p.lives[i]
		born = binary.AppendUvarint(born, uint64(l.born-prevBorn))
		prevBorn = l.born
		d := uint64(0)
		if l.died >= 0 {
			d = uint64(l.died-l.born) + 1
		}
		died = binary.AppendUvarint(died, d)
		size = binary.AppendUvarint(size, l.size/unit)
		addr = binary.AppendVarint(addr, int64(l.addr/unit-prevAddr/unit))
		prevAddr = l.addr
		site = binary.AppendUvarint(site, uint64(l.site))
		if segRow != nil {
			r, ok := segRow[l.seg]
			if l.seg < 0 || !ok {
				seg = binary.AppendUvarint(seg, 0)
			} else {
				seg = binary.AppendUvarint(seg, uint64(r)+1)
			}
		}
		if timed {
			bt := max(l.bornT, p.firstT) - p.firstT
			bornT = binary.AppendVarint(bornT, (bt-prevT)/unitT)
			prevT = bt
			dt := uint64(0)
			if l.died >= 0 {
				dt = uint64(max(l.diedT-p.firstT-bt, 0) / unitT)
			}
			diedT = binary.AppendUvarint(diedT, dt)
		}
	}
	enc := base64.StdEncoding.EncodeToString
	c := pageColumns{N: len(lives), Unit: unit, UnitT: unitT, Born: enc(born), Died: enc(died), Size: enc(size), Addr: enc(addr), Site: enc(site)}
	if segRow != nil && len(segRow) > 0 {
		c.Seg = enc(seg)
	}
	if timed {
		c.BornT, c.DiedT = enc(bornT), enc(diedT)
	}
	return c
}
