package model

import (
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// tables are the sizes of the Checker's internal tables: what would grow
// if the model kept history it does not need.
type tables struct {
	things, cells, live, records, scopes, frames, params, due, stale int
}

func (c *Checker) tables() tables {
	var tb tables
	for _, sp := range []space{heapSpace, deviceSpace} {
		th, ce := c.mem.ix.Size(sp.index())
		tb.things += th
		tb.cells += ce
	}
	for _, s := range c.scopes {
		tb.records += len(s.recs)
	}
	tb.live, tb.scopes, tb.frames = c.nlive, len(c.scopes), len(c.frames)
	tb.params, tb.due, tb.stale = len(c.params), len(c.due), len(c.stale)
	return tb
}

func (tb tables) within(max tables) bool {
	return tb.things <= max.things && tb.cells <= max.cells && tb.live <= max.live &&
		tb.records <= max.records && tb.scopes <= max.scopes && tb.frames <= max.frames &&
		tb.params <= max.params && tb.due <= max.due && tb.stale <= max.stale
}

// TestStreaming runs long loops of allocation and release over a bounded
// set of addresses and checks that the model's tables stay bounded by
// what is alive and by the addresses used, not by the number of events.
func TestStreaming(t *testing.T) {
	const slots = 64 // distinct addresses per loop
	loops := []struct {
		name    string
		effects bool
		step    func(g *gen)
	}{
		{"malloc/free", false, (*gen).heapStep},
		{"alloc/release", false, (*gen).objectStep},
		{"alloc/release with effects", true, (*gen).objectStep},
		{"arena and pool", false, (*gen).arenaPoolStep},
	}
	bound := tables{things: 6 * slots, cells: 10 * slots, live: slots, records: slots, scopes: 1, frames: 1,
		params: 1, due: slots, stale: slots}
	for _, loop := range loops {
		t.Run(loop.name, func(t *testing.T) {
			g := &gen{c: New(traces.Header{Effects: loop.effects}), effects: loop.effects, rng: rand.New(rand.NewPCG(1, 2)), slots: slots}
			const events = 200_000
			for g.pos.Event < events {
				loop.step(g)
				if tb := g.c.tables(); !tb.within(bound) {
					t.Fatalf("after %d events the tables are %+v; want within %+v", g.pos.Event, tb, bound)
				}
			}
			if g.violations != 0 {
				t.Fatalf("the generated trace has %d violations; it should be clean", g.violations)
			}
			if r := g.c.Report(); r.Events < events || r.Objects < events/8 {
				t.Fatalf("report %+v: the loop did not run", r)
			}
		})
	}
}

// gen writes a clean trace straight into a Checker or, when c is nil,
// into rec.
type gen struct {
	c          *Checker
	effects    bool
	rec        []traces.Event
	rng        *rand.Rand
	slots      int
	pos        traces.Pos
	ev         traces.Event
	live       []traces.Addr // addresses in use, by slot; 0: free
	violations int
	// mallocLike's allocator.
	sizes []uint64
	free  map[uint64][]traces.Addr
	bump  uint64
}

func (g *gen) step(ev traces.Event) {
	if g.c == nil {
		g.rec = append(g.rec, ev)
		g.pos.Event++
		return
	}
	g.ev = ev
	vs, err := g.c.Step(&g.ev, g.pos)
	if err != nil {
		panic(err)
	}
	g.violations += len(vs)
	g.pos.Event++
	g.pos.Line++
}

// addr returns slot i's address in a region of its own for each kind of
// step: slots are 4 KiB apart, sizes vary below that.
func (g *gen) addr(region, i int) traces.Addr { return traces.Addr(region<<28 + i*4096) }

func (g *gen) heapStep() {
	if g.live == nil {
		g.live = make([]traces.Addr, g.slots)
	}
	i := g.rng.IntN(g.slots)
	if g.live[i] == 0 {
		g.live[i] = g.addr(1, i) + traces.Addr(16*g.rng.IntN(8))
		g.step(traces.Event{Op: traces.OpMalloc, Addr: g.live[i], Size: uint64(1 + g.rng.IntN(3000))})
		return
	}
	g.step(traces.Event{Op: traces.OpRead, Addr: g.live[i]})
	g.step(traces.Event{Op: traces.OpFree, Addr: g.live[i]})
	g.live[i] = 0
}

// objectStep runs one scope: a few objects and a struct over them, a param
// that takes one for a while, then the scope's exit frees them all.
func (g *gen) objectStep() {
	g.step(traces.Event{Op: traces.OpScopeEnter})
	n := 1 + g.rng.IntN(6)
	fields := make([]traces.Addr, 0, n)
	for i := range n {
		a := g.addr(2, i)
		g.step(traces.Event{Op: traces.OpAlloc, Addr: a, Size: 64})
		g.step(traces.Event{Op: traces.OpAcquire, Addr: a})
		g.step(traces.Event{Op: traces.OpRelease, Addr: a})
		fields = append(fields, a)
	}
	s := g.addr(2, n)
	g.step(traces.Event{Op: traces.OpStructInit, Addr: s, Size: 32, Fields: fields})
	g.step(traces.Event{Op: traces.OpParamRegister, Name: "p", Addr: s})
	g.step(traces.Event{Op: traces.OpParamRelease, Name: "p"})
	g.step(traces.Event{Op: traces.OpScopeExit})
	if g.effects {
		for _, a := range append(fields, s) {
			g.step(traces.Event{Op: traces.OpFree, Addr: a})
		}
	}
}

func (g *gen) arenaPoolStep() {
	g.step(traces.Event{Op: traces.OpFnEnter, Slots: 4})
	for i := range 4 {
		a := g.addr(3, g.rng.IntN(g.slots))
		g.step(traces.Event{Op: traces.OpArenaGet, Slot: i, Addr: a + traces.Addr(i*512), Size: 256, Var: "v"})
	}
	g.step(traces.Event{Op: traces.OpFnExit})
	seg := traces.Addr(0x7f00_0000_0000)
	g.step(traces.Event{Op: traces.OpDevMalloc, Addr: seg, Size: 1 << 20})
	b := seg + traces.Addr(g.rng.IntN(g.slots)*512)
	g.step(traces.Event{Op: traces.OpPoolGet, Addr: b, Size: 512})
	g.step(traces.Event{Op: traces.OpWrite, Addr: b, Space: traces.SpaceDevice})
	g.step(traces.Event{Op: traces.OpPoolPut, Addr: b})
	g.step(traces.Event{Op: traces.OpDevFree, Addr: seg})
}

// mallocLike writes malloc/free events as a glibc-like allocator would
// place them: sizes mostly small and log-distributed, chunks rounded to 16
// bytes, freed chunks reused last-in first-out per size, fresh ones from
// a bump pointer. It keeps about `slots` blocks live.
func (g *gen) mallocLike() {
	if g.free == nil {
		g.free = make(map[uint64][]traces.Addr)
		g.live = make([]traces.Addr, g.slots)
		g.sizes = make([]uint64, g.slots)
		g.bump = 0x5555_0000_0000
	}
	i := g.rng.IntN(g.slots)
	if a := g.live[i]; a != 0 {
		g.step(traces.Event{Op: traces.OpFree, Addr: a})
		chunk := (g.sizes[i] + 15) &^ 15
		g.free[chunk] = append(g.free[chunk], a)
		g.live[i] = 0
		return
	}
	size := uint64(8) << g.rng.IntN(6) // 8 .. 256
	if g.rng.IntN(8) == 0 {
		size <<= 4 + g.rng.IntN(4) // 128 B .. 64 KiB
	}
	size += uint64(g.rng.IntN(int(size)))
	chunk := (size + 15) &^ 15
	var a traces.Addr
	if l := g.free[chunk]; len(l) > 0 {
		a = l[len(l)-1]
		g.free[chunk] = l[:len(l)-1]
	} else {
		a = traces.Addr(g.bump + 16)
		g.bump += chunk + 16
	}
	g.live[i], g.sizes[i] = a, size
	g.step(traces.Event{Op: traces.OpMalloc, Addr: a, Size: size})
	if g.rng.IntN(4) == 0 {
		g.step(traces.Event{Op: traces.OpWrite, Addr: a, Size: size, HasSize: true})
	}
}
