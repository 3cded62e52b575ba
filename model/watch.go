package model

import "github.com/tlcheck/tlcheck/traces"

// Views (a timeline, a profile by site, a plot of live bytes) need more
// of a trace than its verdict: when each thing was made and when it died.
// Rather than read the trace a second time by rules of their own, which
// would drift from the model's, they watch the model: a Checker with a
// Watch tells it of each life as the rules decide it. A Checker without
// one pays a nil check at each birth and death, nothing more.

// Watch is what a view hears as a Checker steps. Any hook may be nil. The
// hooks run during Step (or Close) on the Checker's goroutine; a Thing is
// a copy, valid after the hook returns.
type Watch struct {
	// Event hears of each event before the Checker steps it.
	Event func(ev *traces.Event, pos traces.Pos)
	// Born hears of a thing the current event made.
	Born func(t Thing)
	// Died hears of a thing's death at event: the current event, or, for
	// an object whose free the runtime missed (effects), the earlier event
	// at which its count reached 0, heard of at the next call.
	Died func(t Thing, event int)
	// Missed hears of an object whose due free never came (effects): the
	// model reports it as a leak and counts it leaked. Died follows.
	Missed func(t Thing)
	// FreedLate hears of the late free of an object Missed told of: it no
	// longer counts as leaked.
	FreedLate func(t Thing)
	// Closed hears, once, when the trace is closed, of the things still
	// live (due ones included), in the order made.
	Closed func(live []Thing)

	_ struct{} // hooks are named: the struct may grow
}

// Thing is one thing's life as a view sees it.
type Thing struct {
	ID      int       // the model's number: Violation.Object names it
	Kind    ThingKind // what made it
	Struct  bool      // an object made by struct_init
	Tag     string    // an object's kind, as alloc gave it ("" for none)
	Addr    traces.Addr
	Size    uint64
	Site    string // the site of the event that made it
	Made    int    // the event that made it
	Segment int    // a pool block's segment, while both live; 0 for none
}

// ThingKind is what made a thing. Its values are the rows of the model's
// table of kinds (kinds.go), in order.
type ThingKind uint8

const (
	Block       = ThingKind(kBlock)   // malloc, realloc: a raw heap block
	Object      = ThingKind(kObject)  // alloc, struct_init: a managed object
	ArenaBuffer = ThingKind(kArena)   // arena_get
	Segment     = ThingKind(kSegment) // dev_malloc: a device segment
	PoolBlock   = ThingKind(kPool)    // pool_get: a block inside a segment
	Mapping     = ThingKind(kMapping) // dev_map: a mapped range of a reservation (what is left of one that dev_unmap cut is a new one)
)

// String is the kind's noun: "block", "pool block".
func (k ThingKind) String() string { return kind(k).row().noun }

// Space is the address space things of the kind live in.
func (k ThingKind) Space() traces.Space {
	if kind(k).row().space == deviceSpace {
		return traces.SpaceDevice
	}
	return traces.SpaceHeap
}

// Counted reports whether things of the kind count toward live bytes (a
// pool block lies inside a segment, which is counted already).
func (k ThingKind) Counted() bool { return kind(k).counted() }

// Watch sets the hooks c tells of lives; nil removes them. Reset removes
// them too.
func (c *Checker) Watch(w *Watch) { c.watch = w }

// ReplayWatched replays src as ReplayFunc does, telling w of lives as the
// model finds them.
func ReplayWatched(src traces.Source, w *Watch, f func(v traces.Violation, size uint64)) (traces.Report, error) {
	c := reuse(src.Header())
	defer retire(c)
	return c.replayFunc(src, w, f)
}

// view returns t as a view sees it.
func (t *thing) view() Thing {
	v := Thing{ID: t.id(), Kind: ThingKind(t.kind()), Addr: t.addr(), Size: t.Size, Made: t.made}
	if t.madeWhere != nil {
		v.Site = t.madeWhere.site
	}
	if x := t.x; x != nil {
		v.Struct, v.Tag = x.isStruct, x.tag
		if x.seg != nil {
			v.Segment = x.seg.id()
		}
	}
	return v
}

// The hooks' calls, each behind the nil check that makes them free when
// no one watches.

// watchBorn tells of the thing the event made, once the event is done
// with it (an object's tag and fields are set after make).
func (c *Checker) watchBorn() {
	t := c.born
	c.born = nil
	if c.watch.Born != nil {
		c.watch.Born(t.view())
	}
}

func (c *Checker) watchDied(t *thing, event int) {
	if c.watch != nil && c.watch.Died != nil {
		c.watch.Died(t.view(), event)
	}
}

func (c *Checker) watchMissed(t *thing) {
	if c.watch != nil && c.watch.Missed != nil {
		c.watch.Missed(t.view())
	}
}

func (c *Checker) watchFreedLate(t *thing) {
	if c.watch != nil && c.watch.FreedLate != nil {
		c.watch.FreedLate(t.view())
	}
}

func (c *Checker) watchClosed() {
	if c.watch == nil || c.watch.Closed == nil {
		return
	}
	ts := c.liveThings()
	live := make([]Thing, len(ts))
	for i, t := range ts {
		live[i] = t.view()
	}
	c.watch.Closed(live)
}
