package model

import (
	"strconv"

	"github.com/tlcheck/tlcheck/model/internal/index"
	"github.com/tlcheck/tlcheck/traces"
)

// state is where a thing stands in its life.
type state uint8

const (
	live state = iota
	due        // effects only: count reached 0, the runtime's free is awaited
	dead
)

// hist is an event as a violation quotes it: its number, line and site.
// Things keep their two (where made, where died) more compactly, as event
// numbers and shared where records.
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
// are kept by identity; the index maps addresses to them, and makes and
// recycles them (see index.Thing).
//
// A log of millions of blocks keeps most of them dead until their range is
// reused, so a thing is kept to 64 bytes: what only some kinds need is in
// x, the lines and sites of its two events are in shared records, and the
// Head the index reads holds the range, the id and kind (fixed once made)
// in a word, and Died, which tells its state: 1 + the event that ended
// it, 0 while live, dueMark while due.
type thing struct {
	index.Head
	made                 int    // the event that made it
	madeWhere, diedWhere *where // the lines and sites of those events
	x                    *extra // what only objects, arena buffers, segments and pool blocks need
}

// dueMark is thing.Died while a thing is due. A live thing's Died is 0,
// so that a zero thing is live.
const dueMark = -1

func (t *thing) id() int      { return t.ID() }
func (t *thing) kind() kind   { return kind(t.Kind()) }
func (t *thing) setID(id int) { t.SetID(id) }

// Indexed, Renew and KeepsData are what the index needs of a thing (see
// index.Thing).
func (t *thing) Indexed() *index.Head { return &t.Head }

// Renew clears t for a new life, keeping its extra (cleared) for a kind
// that needs one.
func (t *thing) Renew(index.Kind) {
	x := t.x
	*t = thing{x: x}
	if x != nil {
		*x = extra{zero: hist{event: -1}}
	}
}

func (t *thing) KeepsData() bool { return t.x != nil }

// newObject makes an object and its extra together (every object has
// one): the index's Config.NewPinned.
func newObject() *thing {
	o := &struct {
		t thing
		x extra
	}{}
	o.t.x = &o.x
	o.x.zero = hist{event: -1}
	return &o.t
}

// state tells t's state by its died.
func (t *thing) state() state {
	switch {
	case t.Died > 0:
		return dead
	case t.Died == dueMark:
		return due
	}
	return live
}

// extra holds what only objects, arena buffers, segments and pool blocks
// need, so that a raw block (most of an mtrace log) stays small.
type extra struct {
	count    int    // objects: the reference count
	records  int32  // objects: scope records that name it
	mark     uint32 // objects: the end check's epoch when last reached
	isStruct bool   // objects: made by struct_init
	missed   bool   // effects: reported as a missed free, and not freed since
	zero     hist   // effects: the call at which the count reached 0
	fields   []*thing
	tag      string // alloc's kind
	seg      *thing // a pool block's segment
	poolLive int    // a segment's live pool blocks
	slot     int    // an arena buffer's slot
	version  int    // objects: layer 5's bumps since it was made
	// objects: the version whose values it holds, plus one, set by a
	// recompute and cleared by the next bump; 0: the current version
	holds    int
	snap     *snapshot // objects: the snapshot this object holds, if a snapshot event made it one
	leafGrad bool      // objects: the storage of a leaf that requires grad (leaf_grad)
	drift    int64     // objects: the runtime's stated count minus the model's, when last reported
	stale    *staleHit // objects: stale records skipped at its address while it lived (stale.go)
}

func (t *thing) ext() *extra {
	if t.x == nil {
		t.x = &extra{zero: hist{event: -1}}
	}
	return t.x
}

func (t *thing) addr() traces.Addr { return traces.Addr(t.Lo) }

// hi is the end of the range t owns.
func (t *thing) hi() uint64 { return t.Hi() }

// madeAt and diedAt are the events that made t and ended it.
func (t *thing) madeAt() hist {
	return hist{event: t.made, line: t.madeWhere.line.line(t.made), site: t.madeWhere.site}
}

func (t *thing) diedAt() hist {
	return hist{event: t.Died - 1, line: t.diedWhere.line.line(t.Died - 1), site: t.diedWhere.site}
}

// String describes t for messages: "object #4 (64 bytes, allocated at
// event 2 a.tl:2)", with an arena buffer's slot and an object's kind when
// it is not the default.
func (t *thing) String() string {
	noun := t.kind().row().noun
	if t.x != nil && t.x.isStruct {
		noun = "struct"
	}
	s := noun + " #" + strconv.Itoa(t.id()) + " ("
	switch {
	case t.kind() == kArena && t.x != nil:
		s += "slot " + strconv.Itoa(t.x.slot) + ", "
	case t.kind() == kObject && t.x != nil && t.x.tag != "" && t.x.tag != "tensor":
		s += "kind " + strconv.Quote(t.x.tag) + ", "
	}
	made := ", allocated at "
	if t.kind() == kMapping {
		made = ", mapped at "
	}
	return s + strconv.FormatUint(t.Size, 10) + " bytes" + made + t.madeAt().at() + ")"
}

// deathPhrase is ", which died at event 5 a.tl:3", for a thing no longer live.
func (t *thing) deathPhrase() string {
	if t.state() == due {
		return ", whose count reached 0 at " + t.x.zero.at()
	}
	return ", which " + t.kind().row().diedVerb + " at " + t.diedAt().at()
}

// history lists the events that explain t: where it was made and, if it is
// no longer live, where it died.
func (t *thing) history(dst []traces.Related) []traces.Related {
	dst = append(dst, t.madeAt().related("allocated"))
	switch t.state() {
	case due:
		dst = append(dst, t.x.zero.related("count reached 0"))
	case dead:
		if t.kind() == kObject && t.x != nil && t.x.zero.event >= 0 && t.x.zero.event != t.Died-1 {
			dst = append(dst, t.x.zero.related("count reached 0"))
		}
		dst = append(dst, t.diedAt().related(t.kind().row().diedWhat))
	}
	return dst
}
