package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// TestRandomTraces steps random events, mostly wrong ones, over a few
// addresses and checks that the model never panics and that its books
// stay consistent: live bytes, the live count and the shadow agree with a
// recount, violations name the event stepped, and the end verdict counts
// every live thing once.
func TestRandomTraces(t *testing.T) {
	ops := traces.Ops()
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 11))
		c := New(traces.Header{Effects: seed%2 == 0})
		addr := func() traces.Addr {
			if rng.IntN(10) == 0 {
				return 0
			}
			return traces.Addr(0x1000 + 0x40*rng.IntN(12) + rng.IntN(2)*8)
		}
		names := []string{"a", "b"}
		n := 20 + rng.IntN(200)
		for i := range n {
			ev := traces.Event{Op: ops[rng.IntN(len(ops))], Addr: addr(), NewAddr: addr(),
				Size: uint64(rng.IntN(200)), HasSize: rng.IntN(2) == 0, Name: names[rng.IntN(2)],
				Slots: rng.IntN(4), Slot: rng.IntN(5) - 1, Var: names[rng.IntN(2)], Site: fmt.Sprint("r.tl:", i)}
			if rng.IntN(4) == 0 {
				ev.Space = traces.SpaceDevice
			}
			if ev.Op == traces.OpStructInit {
				ev.Fields = []traces.Addr{addr(), addr()}
			}
			if ev.Op == traces.OpEnd && rng.IntN(3) > 0 {
				continue // keep end rare, so that most traces run on after it
			}
			pos := traces.Pos{Event: i, Line: i + 2}
			vs, err := c.Step(&ev, pos)
			if err != nil && (ev.Op != traces.OpFree && ev.Op != traces.OpRealloc || c.effects) {
				t.Fatalf("seed %d event %d %v: unexpected error %v", seed, i, ev.Op, err)
			}
			for _, v := range vs {
				if v.Event > i || v.Message == "" || v.Related == nil {
					t.Fatalf("seed %d event %d: bad violation %+v", seed, i, v)
				}
			}
			checkBooks(t, c, fmt.Sprintf("seed %d event %d (%v)", seed, i, ev.Op))
		}
		c.Close()
		first := !c.ended
		end := traces.Event{Op: traces.OpEnd}
		if _, err := c.Step(&end, traces.Pos{Event: n, Line: n + 2}); err != nil {
			t.Fatal(err)
		}
		if r := c.Report(); !r.Complete {
			t.Fatalf("seed %d: incomplete after end", seed)
		} else if first && !c.effects && r.Leaked.Objects+r.StillReachable.Objects != c.nlive {
			t.Fatalf("seed %d: %d leaked + %d still reachable, but %d live", seed, r.Leaked.Objects, r.StillReachable.Objects, c.nlive)
		}
	}
}

// checkBooks recounts what the shadows remember.
func checkBooks(t *testing.T, c *Checker, where string) {
	t.Helper()
	var bytes uint64
	things := c.liveThings()
	for i, th := range things {
		if i > 0 && things[i-1].id() >= th.id() {
			t.Fatalf("%s: live things out of order", where)
		}
		if th.kind().counted() {
			bytes += th.Size
		}
		if th.kind() == kObject && th.state() == live && th.x.count <= 0 {
			t.Fatalf("%s: live %v has count %d", where, th, th.x.count)
		}
	}
	if len(things) != c.nlive || bytes != c.liveBytes || c.liveBytes > c.peak {
		t.Fatalf("%s: %d live things of %d bytes (peak %d), books say %d of %d", where, len(things), bytes, c.peak, c.nlive, c.liveBytes)
	}
	if err := c.mem.ix.Check(); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, s := range c.scopes {
		for _, r := range s.recs {
			if r.t.x.records <= 0 {
				t.Fatalf("%s: a record of %v, whose record count is %d", where, r.t, r.t.x.records)
			}
		}
	}
}
