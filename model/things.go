package model

import (
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// kind is what made a thing; it decides which ops may name it, its
// address space and its overlap class.
type kind uint8

const (
	kBlock   kind = iota // malloc, realloc: a raw heap block
	kObject              // alloc, struct_init: a managed object
	kArena               // arena_get: an arena buffer
	kSegment             // dev_malloc: a device segment
	kPool                // pool_get: a pool block inside a segment
)

// kindMask is a set of kinds.
type kindMask uint8

const (
	anyKind   kindMask = 1<<kBlock | 1<<kObject | 1<<kArena | 1<<kSegment | 1<<kPool
	freeable  kindMask = 1<<kBlock | 1<<kObject
	onlyBlock kindMask = 1 << kBlock
)

func (k kind) mask() kindMask { return 1 << k }

// class is the overlap class: things of one class must not overlap while
// both are live. Heap blocks and objects share one.
func (k kind) class() kind {
	if k == kObject {
		return kBlock
	}
	return k
}

// counted reports whether the thing's bytes count toward live bytes: pool
// blocks lie inside segments, which are counted already.
func (k kind) counted() bool { return k != kPool }

var kindNouns = [...]string{kBlock: "block", kObject: "object", kArena: "arena buffer", kSegment: "device segment", kPool: "pool block"}

// diedVerb says how a thing of this kind ends, for messages.
var diedVerbs = [...]string{kBlock: "was freed", kObject: "died", kArena: "died with its frame", kSegment: "was freed", kPool: "was put back"}

// diedWhat names a thing's death in Related.
var diedWhats = [...]string{kBlock: "freed", kObject: "died", kArena: "frame exited", kSegment: "freed", kPool: "put back"}

// state is where a thing stands in its life.
type state uint8

const (
	live state = iota
	due        // effects only: count reached 0, the runtime's free is awaited
	dead
)

// hist is one event of a thing's history, kept so that a violation can
// quote it: where the thing was made, where it died.
type hist struct {
	event int
	line  int
	site  string
}

// at formats "event 2 a.tl:2".
func (h hist) at() string {
	s := "event " + strconv.Itoa(h.event)
	if h.site != "" {
		s += " " + h.site
	}
	return s
}

func (h hist) related(what string) traces.Related {
	return traces.Related{Event: h.event, Line: h.line, What: what, Site: h.site}
}

// thing is anything the trace made: a block, an object, an arena buffer, a
// segment or a pool block. Things are numbered from 1 in the order made and
// are kept by identity; the shadow memory maps addresses to them.
type thing struct {
	lo, hi  uint64 // the range owned: [addr, addr+max(size,1)), clamped at the top of the space
	size    uint64 // bytes as declared
	id      int
	count   int   // objects: the reference count
	records int32 // objects: scope records that name it
	mark    uint32
	kind    kind
	state   state
	level   uint8 // where the shadow keeps it
	isSt    bool  // a struct (struct_init)
	made    hist
	died    hist
	x       *extra // what only some kinds need
}

// extra holds what only objects, arena buffers and pool blocks need, so
// that a raw block (most of an mtrace log) stays small.
type extra struct {
	zero     hist     // effects: the call at which the count reached 0
	fields   []*thing // a struct's fields, until it dies
	tag      string   // alloc's kind
	seg      *thing   // a pool block's segment
	poolLive int      // a segment's live pool blocks
	slot     int      // an arena buffer's slot
}

func (t *thing) ext() *extra {
	if t.x == nil {
		t.x = &extra{zero: hist{event: -1}}
	}
	return t.x
}

// reset clears all but t's place in the shadow (range and level), keeping
// its extra for reuse.
func (t *thing) reset() {
	x := t.x
	*t = thing{lo: t.lo, hi: t.hi, level: t.level}
	if x != nil {
		*x = extra{zero: hist{event: -1}}
		t.x = x
	}
}

func (t *thing) addr() traces.Addr { return traces.Addr(t.lo) }

// String describes t for messages: "object #4 (64 bytes, allocated at
// event 2 a.tl:2)", with an arena buffer's slot and an object's kind when
// it is not the default.
func (t *thing) String() string {
	noun := kindNouns[t.kind]
	if t.isSt {
		noun = "struct"
	}
	s := noun + " #" + strconv.Itoa(t.id) + " ("
	switch {
	case t.kind == kArena && t.x != nil:
		s += "slot " + strconv.Itoa(t.x.slot) + ", "
	case t.kind == kObject && t.x != nil && t.x.tag != "" && t.x.tag != "tensor":
		s += "kind " + strconv.Quote(t.x.tag) + ", "
	}
	return s + strconv.FormatUint(t.size, 10) + " bytes, allocated at " + t.made.at() + ")"
}

// deathPhrase is ", which died at event 5 a.tl:3", for a thing no longer live.
func (t *thing) deathPhrase() string {
	if t.state == due {
		return ", whose count reached 0 at " + t.x.zero.at()
	}
	return ", which " + diedVerbs[t.kind] + " at " + t.died.at()
}

// history lists the events that explain t: where it was made and, if it is
// no longer live, where it died.
func (t *thing) history(dst []traces.Related) []traces.Related {
	dst = append(dst, t.made.related("allocated"))
	switch t.state {
	case due:
		dst = append(dst, t.x.zero.related("count reached 0"))
	case dead:
		if t.kind == kObject && t.x != nil && t.x.zero.event >= 0 && t.x.zero.event != t.died.event {
			dst = append(dst, t.x.zero.related("count reached 0"))
		}
		dst = append(dst, t.died.related(diedWhats[t.kind]))
	}
	return dst
}
