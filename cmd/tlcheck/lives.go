package main

import (
	"slices"

	"github.com/tlcheck/tlcheck/traces"
)

// The exports draw each thing's life (made to dead) and the live bytes of
// each address space, which the model does not expose event by event. The
// lives tracker recomputes them from the events by the ops' rules, as the
// model states them (model/doc.go), without checking anything: the model
// alone finds violations. Where a trace breaks the rules the tracker takes
// the model's side (a misuse changes nothing, a thing is made even where it
// overlaps), and the tests hold its totals (things made, peak live bytes)
// to the model's on every trace the repository ships.
//
// Like the model, it keeps only what is live: its memory grows with the
// live things, never with the length of the trace.

// lifeKind is what made a thing, as the model tells them apart.
type lifeKind uint8

const (
	lkBlock   lifeKind = iota // malloc, realloc
	lkObject                  // alloc, struct_init
	lkArena                   // arena_get
	lkSegment                 // dev_malloc
	lkPool                    // pool_get
)

var lifeKindNames = [...]string{lkBlock: "block", lkObject: "object", lkArena: "arena buffer", lkSegment: "device segment", lkPool: "pool block"}

func (k lifeKind) String() string { return lifeKindNames[k] }

// space is the address space the kind's things live in.
func (k lifeKind) space() traces.Space {
	if k == lkSegment || k == lkPool {
		return traces.SpaceDevice
	}
	return traces.SpaceHeap
}

// counted reports whether the kind's bytes count as live bytes: pool
// blocks lie inside segments, which are counted already (as in the model).
func (k lifeKind) counted() bool { return k != lkPool }

// life is one thing, from the event that made it to the one that ended it.
type life struct {
	id     int // the model's number: Violation.Object names it
	kind   lifeKind
	addr   traces.Addr
	size   uint64
	site   string // where it was made
	made   stamp
	zero   stamp // effects: when its count reached 0
	tag    string
	strct  bool
	count  int            // objects: the reference count
	fields []*life        // structs: the fields it holds
	seg    *life          // pool blocks: the segment they lie in
	pool   map[*life]bool // segments: their live pool blocks
	due    bool           // effects: count reached 0, free awaited
	dead   bool
}

// stamp is when an event happened: its number and, where the trace gives
// one, its time.
type stamp struct {
	event int
	t     int64 // ns; meaningful only where hasT
	hasT  bool
}

// lifeHooks hear of lives as the tracker finds them. Any may be nil.
type lifeHooks struct {
	born func(l *life)
	// died hears of a death at stamp at; a due object the runtime never
	// freed dies at the call that made it due, heard of later.
	died func(l *life, at stamp)
	// unleaked hears of a late free, before end, of an object reported as
	// a missed free: the model no longer counts it as leaked.
	unleaked func(l *life)
}

// lives tracks the live things of one trace.
type lives struct {
	effects bool
	hooks   lifeHooks

	made    int
	byID    map[int]*life
	heap    map[traces.Addr][]*life // live things by start address, oldest first
	dev     map[traces.Addr][]*life
	segs    []*life // live segments, for the pool blocks inside them
	scopes  [][]*life
	frames  []lframe
	params  map[string]*life
	due     []*life
	unknown traces.Op             // an op step has no rule for (see makesNoLife); 0 while none
	missed  map[traces.Addr]*life // effects: the last missed free at each address, until it is freed late or the address reused
	ended   bool
	bytes   [2]uint64 // live bytes by traces.Space
	peak    uint64    // most bytes live at once, both spaces together
	here    stamp
	work    []*life
	pending []*life // things to kill once the event is done
}

// lframe is an arena frame: its slots' current buffers and every buffer it
// handed out.
type lframe struct {
	nslots int
	slots  map[int]*life
	bufs   []*life
}

func newLives(h traces.Header, hooks lifeHooks) *lives {
	return &lives{
		effects: h.Effects,
		hooks:   hooks,
		byID:    make(map[int]*life),
		heap:    make(map[traces.Addr][]*life),
		dev:     make(map[traces.Addr][]*life),
		params:  make(map[string]*life),
		missed:  make(map[traces.Addr]*life),
	}
}

// live returns the bytes live now in space sp.
func (s *lives) live(sp traces.Space) uint64 { return s.bytes[sp] }

// step applies one event at stamp at. quiet says that the model found
// nothing wrong with the event's free (free, or realloc's free half): a
// free of an object reported as a missed free is then the model accepting
// it late, which a model that rejects late frees reports instead.
func (s *lives) step(ev *traces.Event, at stamp, quiet bool) {
	s.here = at
	if ev.Op != traces.OpFree {
		s.settle()
	}
	switch ev.Op {
	case traces.OpMalloc:
		s.malloc(ev.Addr, ev.Size, ev.Site)
	case traces.OpFree:
		s.free(ev.Addr, quiet)
	case traces.OpRealloc:
		s.free(ev.Addr, quiet)
		s.malloc(ev.NewAddr, ev.Size, ev.Site)
	case traces.OpEnd:
		s.ended = true
	case traces.OpScopeEnter:
		s.scopes = append(s.scopes, nil)
	case traces.OpScopeExit:
		if n := len(s.scopes); n > 0 {
			recs := s.scopes[n-1]
			s.scopes = s.scopes[:n-1]
			for i := len(recs) - 1; i >= 0; i-- { // newest first, as the contract says
				if l := recs[i]; !l.dead && !l.due {
					s.release(l)
				}
			}
		}
	case traces.OpAlloc, traces.OpStructInit:
		s.alloc(ev)
	case traces.OpAcquire:
		if l := s.object(ev.Addr); l != nil {
			l.count++
		}
	case traces.OpRelease:
		if l := s.object(ev.Addr); l != nil {
			s.release(l)
		}
	case traces.OpRegister:
		if l := s.object(ev.Addr); l != nil && len(s.scopes) > 0 {
			s.scopes[len(s.scopes)-1] = append(s.scopes[len(s.scopes)-1], l)
		}
	case traces.OpUnregister:
		if l := s.object(ev.Addr); l != nil {
			s.unregister(l)
		}
	case traces.OpParamRegister:
		if l := s.object(ev.Addr); l != nil {
			l.count++
			old := s.params[ev.Name]
			s.params[ev.Name] = l
			if old != nil && !old.dead && !old.due {
				s.release(old)
			}
		}
	case traces.OpParamRelease:
		if old, ok := s.params[ev.Name]; ok {
			delete(s.params, ev.Name)
			if !old.dead && !old.due {
				s.release(old)
			}
		}
	case traces.OpFnEnter:
		s.frames = append(s.frames, lframe{nslots: max(ev.Slots, 0)})
	case traces.OpFnExit:
		if n := len(s.frames); n > 0 {
			for _, b := range s.frames[n-1].bufs {
				s.kill(b, s.here)
			}
			s.frames = s.frames[:n-1]
		}
	case traces.OpArenaGet:
		s.arenaGet(ev)
	case traces.OpDevMalloc:
		if ev.Addr != 0 {
			s.segs = append(s.segs, s.make(lkSegment, ev.Addr, ev.Size, ev.Site))
		}
	case traces.OpDevFree:
		if seg := s.find(ev.Addr, lkSegment); seg != nil {
			// Its pool blocks die with it, in the order made.
			for p := range seg.pool {
				s.pending = append(s.pending, p)
			}
			slices.SortFunc(s.pending, func(a, b *life) int { return a.id - b.id })
			s.kill(seg, s.here)
			s.killPending()
		}
	case traces.OpPoolGet:
		s.poolGet(ev)
	case traces.OpPoolPut:
		if p := s.find(ev.Addr, lkPool); p != nil {
			s.kill(p, s.here)
		}
	default:
		if !makesNoLife[ev.Op] {
			// A new op whose effect on lives is not written here: the
			// export would drift from the model without a word.
			// TestLivesKnowEveryOp fails on it.
			s.unknown = ev.Op
		}
	}
}

// makesNoLife lists the ops that make, end and count nothing: the tracker
// has no case for them on purpose.
var makesNoLife = map[traces.Op]bool{traces.OpRead: true, traces.OpWrite: true, traces.OpRecordStream: true,
	// Layer 5 names objects (save, bump) or saved tensors, which are not things.
	traces.OpSave: true, traces.OpUnpack: true, traces.OpUnsave: true, traces.OpBump: true, traces.OpLeafGrad: true,
	traces.OpSnapshot: true, traces.OpRestore: true, traces.OpRecompute: true}

// liveLives returns the things still live (due ones included), in the
// order made.
func (s *lives) liveLives() []*life {
	out := make([]*life, 0, len(s.byID))
	for id := 1; len(out) < len(s.byID) && id <= s.made; id++ {
		if l := s.byID[id]; l != nil {
			out = append(out, l)
		}
	}
	return out
}

// settle kills the due objects whose free did not come (effects): they
// died, as far as the model knows, at the call that made them due. Due
// objects at the end of the file stay live: the run may have been cut off
// between the call and its frees.
func (s *lives) settle() {
	for _, l := range s.due {
		if l.due {
			l.due = false
			s.kill(l, l.zero)
			// A free names the newest thing at its address, as the model
			// reads one: of two missed frees there, the newer one's.
			if m := s.missed[l.addr]; m == nil || m.id < l.id {
				s.missed[l.addr] = l
			}
		}
	}
	clear(s.due)
	s.due = s.due[:0]
}

func (s *lives) shadow(sp traces.Space) map[traces.Addr][]*life {
	if sp == traces.SpaceDevice {
		return s.dev
	}
	return s.heap
}

// find returns the newest live (or due) thing of kind k that starts at a.
func (s *lives) find(a traces.Addr, k lifeKind) *life {
	if a == 0 {
		return nil
	}
	ls := s.shadow(k.space())[a]
	for i := len(ls) - 1; i >= 0; i-- {
		if ls[i].kind == k {
			return ls[i]
		}
	}
	return nil
}

// object returns the live object at a; a due object is dead to every op.
func (s *lives) object(a traces.Addr) *life {
	if l := s.find(a, lkObject); l != nil && !l.due {
		return l
	}
	return nil
}

// make records a new thing made by the current event.
func (s *lives) make(k lifeKind, a traces.Addr, size uint64, site string) *life {
	s.made++
	l := &life{id: s.made, kind: k, addr: a, size: size, site: site, made: s.here}
	if len(s.missed) > 0 && k.space() == traces.SpaceHeap {
		delete(s.missed, a) // a free of a now names the new thing, or its death
	}
	s.byID[l.id] = l
	m := s.shadow(k.space())
	m[a] = append(m[a], l)
	if k.counted() {
		s.bytes[k.space()] += size
		s.peak = max(s.peak, s.bytes[traces.SpaceHeap]+s.bytes[traces.SpaceDevice])
	}
	if s.hooks.born != nil {
		s.hooks.born(l)
	}
	return l
}

// kill ends l's life at stamp at and forgets it.
func (s *lives) kill(l *life, at stamp) {
	if l.dead {
		return
	}
	l.dead, l.due = true, false
	delete(s.byID, l.id)
	m := s.shadow(l.kind.space())
	ls := m[l.addr]
	for i, o := range ls {
		if o == l {
			ls = append(ls[:i], ls[i+1:]...)
			break
		}
	}
	if len(ls) == 0 {
		delete(m, l.addr)
	} else {
		m[l.addr] = ls
	}
	if l.kind.counted() {
		s.bytes[l.kind.space()] -= l.size
	}
	if l.kind == lkSegment {
		for i, o := range s.segs {
			if o == l {
				s.segs = append(s.segs[:i], s.segs[i+1:]...)
				break
			}
		}
	}
	if l.seg != nil {
		delete(l.seg.pool, l)
	}
	l.fields, l.seg, l.pool = nil, nil, nil
	if s.hooks.died != nil {
		s.hooks.died(l, at)
	}
}

func (s *lives) killPending() {
	for _, l := range s.pending {
		s.kill(l, s.here)
	}
	clear(s.pending)
	s.pending = s.pending[:0]
}

// malloc makes a block, unless a live block starts at a: the model then
// reports an overlap and ignores the allocation.
func (s *lives) malloc(a traces.Addr, size uint64, site string) {
	if a != 0 && s.find(a, lkBlock) == nil {
		s.make(lkBlock, a, size, site)
	}
}

// free ends a block or, with effects, an object; or, quiet and before
// end, frees late an object reported as a missed free.
func (s *lives) free(a traces.Addr, quiet bool) {
	if a == 0 {
		return
	}
	var l *life
	ls := s.heap[a]
	for i := len(ls) - 1; i >= 0; i-- {
		if k := ls[i].kind; k == lkBlock || k == lkObject {
			l = ls[i]
			break
		}
	}
	switch {
	case l == nil:
		if m := s.missed[a]; m != nil && quiet {
			delete(s.missed, a)
			if !s.ended && s.hooks.unleaked != nil {
				s.hooks.unleaked(m)
			}
		}
	case l.kind == lkBlock || l.due:
		s.kill(l, s.here)
	default: // a premature free: the object dies, a struct releases its fields
		l.count = 0
		s.zero(l)
		s.kill(l, s.here)
	}
}

func (s *lives) alloc(ev *traces.Event) {
	if ev.Addr == 0 {
		return
	}
	var fields []*life
	if ev.Op == traces.OpStructInit {
		for _, f := range ev.Fields {
			if fl := s.object(f); fl != nil {
				fl.count++
				fields = append(fields, fl)
			}
		}
	}
	l := s.make(lkObject, ev.Addr, ev.Size, ev.Site)
	l.count, l.fields, l.tag = 1, fields, ev.Kind
	l.strct = ev.Op == traces.OpStructInit
	if n := len(s.scopes); n > 0 {
		s.scopes[n-1] = append(s.scopes[n-1], l)
	}
}

// release drops a reference to a live object.
func (s *lives) release(l *life) {
	l.count--
	if l.count <= 0 {
		s.zero(l)
	}
}

// zero handles objects whose count reached 0: each releases its fields,
// then dies or, with effects, waits for its free.
func (s *lives) zero(l *life) {
	s.work = append(s.work[:0], l)
	for len(s.work) > 0 {
		l := s.work[len(s.work)-1]
		s.work = s.work[:len(s.work)-1]
		for _, f := range l.fields {
			if f.dead || f.due || f.count == 0 {
				continue // the model reports a double free; nothing changes
			}
			f.count--
			if f.count == 0 {
				s.work = append(s.work, f)
			}
		}
		l.fields = nil
		l.zero = s.here
		if s.effects {
			l.due = true
			s.due = append(s.due, l)
		} else {
			s.pending = append(s.pending, l)
		}
	}
	s.killPending()
}

// unregister removes the object's newest record, from the top scope down.
func (s *lives) unregister(l *life) {
	for i := len(s.scopes) - 1; i >= 0; i-- {
		recs := s.scopes[i]
		for j := len(recs) - 1; j >= 0; j-- {
			if recs[j] == l {
				s.scopes[i] = append(recs[:j], recs[j+1:]...)
				return
			}
		}
	}
}

func (s *lives) arenaGet(ev *traces.Event) {
	n := len(s.frames)
	if n == 0 {
		return
	}
	f := &s.frames[n-1]
	if ev.Slot < 0 || ev.Slot >= f.nslots || ev.Addr == 0 {
		return
	}
	if cur := f.slots[ev.Slot]; cur != nil && cur.addr == ev.Addr {
		if ev.Size <= cur.size {
			return // the slot's buffer again
		}
		s.kill(cur, s.here) // it grows in place: a new life, as in the model
	}
	b := s.make(lkArena, ev.Addr, ev.Size, ev.Site)
	if f.slots == nil {
		f.slots = make(map[int]*life)
	}
	f.slots[ev.Slot] = b
	f.bufs = append(f.bufs, b)
}

// poolGet makes a pool block, in any case (as the model does), tied to the
// newest live segment holding its first byte.
func (s *lives) poolGet(ev *traces.Event) {
	if ev.Addr == 0 {
		return
	}
	var seg *life
	for i := len(s.segs) - 1; i >= 0; i-- {
		g := s.segs[i]
		if ev.Addr >= g.addr && uint64(ev.Addr)-uint64(g.addr) < max(g.size, 1) {
			seg = g
			break
		}
	}
	p := s.make(lkPool, ev.Addr, ev.Size, ev.Site)
	if seg != nil {
		if seg.pool == nil {
			seg.pool = make(map[*life]bool)
		}
		seg.pool[p], p.seg = true, seg
	}
}
