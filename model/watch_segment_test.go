package model_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// A pool block's Thing.Segment is the model's number of the segment it
// was handed out from: the torch-snapshot export files live blocks under
// their segments by it. These tests hold Watch to it at each hook.

// watchedSegments replays evs and returns, for each pool block the model
// made, the Segment each hook told (in the order the hooks ran, "born",
// "died" or "closed" before it).
func watchedSegments(t *testing.T, evs []traces.Event) map[int][]string {
	t.Helper()
	got := map[int][]string{}
	tell := func(hook string, th model.Thing) {
		if th.Kind == model.PoolBlock {
			got[th.ID] = append(got[th.ID], fmt.Sprintf("%s %d", hook, th.Segment))
		}
	}
	w := &model.Watch{
		Born: func(th model.Thing) { tell("born", th) },
		Died: func(th model.Thing, _ int) { tell("died", th) },
		Closed: func(ts []model.Thing) {
			for _, th := range ts {
				tell("closed", th)
			}
		},
	}
	src := &sliceSource{h: traces.Header{Format: traces.FormatName, Version: traces.Version}, evs: evs}
	if _, err := model.ReplayWatched(src, w, func(traces.Violation, uint64) {}); err != nil {
		t.Fatal(err)
	}
	return got
}

func devEv(op traces.Op, addr traces.Addr, size uint64) traces.Event {
	return traces.Event{Op: op, Addr: addr, Size: size, HasSize: size != 0}
}

// TestWatchPoolBlockSegment: dev_malloc, pool_get, pool_put, dev_free,
// end: the pool block (#2) is segment #1's, when born and when put back.
func TestWatchPoolBlockSegment(t *testing.T) {
	got := watchedSegments(t, []traces.Event{
		devEv(traces.OpDevMalloc, 0x1000, 4096),
		devEv(traces.OpPoolGet, 0x1000, 512),
		devEv(traces.OpPoolPut, 0x1000, 0),
		devEv(traces.OpDevFree, 0x1000, 0),
		{Op: traces.OpEnd},
	})
	want := "[born 1 died 1]"
	if s := fmt.Sprint(got[2]); s != want {
		t.Errorf("pool block #2: the hooks told segments %s, want %s", s, want)
	}
}

// TestWatchPoolBlockSegmentGenerated runs random device-layer programs
// (segments made and freed at three places, pool blocks got and put
// inside them, past their ends, in freed ones and outside all) and holds
// every hook's Segment to a shadow of the segments built from the hooks'
// own births and deaths: a block born inside a live segment names it,
// at birth, at its death (by put or with its segment) and at close; one
// born elsewhere names none.
func TestWatchPoolBlockSegmentGenerated(t *testing.T) {
	const segSize = 0x1000
	slots := []traces.Addr{0x10000, 0x20000, 0x30000}
	rng := rand.New(rand.NewPCG(29, 18))
	for prog := range 300 {
		var evs []traces.Event
		segLive := make([]bool, len(slots))
		var blocks []traces.Addr // pool blocks got and not put, as the program thinks
		for range 5 + rng.IntN(25) {
			s := rng.IntN(len(slots))
			switch r := rng.IntN(10); {
			case r < 2:
				if !segLive[s] {
					evs = append(evs, devEv(traces.OpDevMalloc, slots[s], segSize))
					segLive[s] = true
				}
			case r < 3:
				if segLive[s] {
					evs = append(evs, devEv(traces.OpDevFree, slots[s], 0))
					segLive[s] = false
				}
			case r < 7:
				// Inside a slot (live or not), past its end, or between slots.
				addr := slots[s] + traces.Addr(rng.IntN(8)*0x200)
				size := uint64(0x100 + rng.IntN(4)*0x100)
				if rng.IntN(8) == 0 {
					addr = slots[s] + segSize + 0x800
				}
				evs = append(evs, devEv(traces.OpPoolGet, addr, size))
				blocks = append(blocks, addr)
			default:
				if len(blocks) > 0 {
					i := rng.IntN(len(blocks))
					evs = append(evs, devEv(traces.OpPoolPut, blocks[i], 0))
					blocks = append(blocks[:i], blocks[i+1:]...)
				}
			}
		}
		if rng.IntN(2) == 0 {
			evs = append(evs, traces.Event{Op: traces.OpEnd})
		}
		if err := checkSegments(evs); err != nil {
			t.Fatalf("program %d: %v\n%s", prog, err, progText(evs))
		}
	}
}

// progText lists a program's events one a line: "pool_get 0x10200 768".
func progText(evs []traces.Event) string {
	var b strings.Builder
	for i, ev := range evs {
		fmt.Fprintf(&b, "%d: %s %s", i, ev.Op, ev.Addr)
		if ev.HasSize {
			fmt.Fprintf(&b, " %d", ev.Size)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// checkSegments replays evs and checks each hook's Segment against the
// shadow.
func checkSegments(evs []traces.Event) error {
	type seg struct {
		id     int
		lo, hi traces.Addr
	}
	var (
		segs   = map[int]seg{} // live segments by ID, from the hooks
		bornIn = map[int]int{} // each pool block's segment at birth
		errs   []error
	)
	expect := func(hook string, th model.Thing, want int) {
		if th.Segment != want {
			errs = append(errs, fmt.Errorf("%s: pool block #%d at %s tells segment %d, want %d", hook, th.ID, th.Addr, th.Segment, want))
		}
	}
	w := &model.Watch{
		Born: func(th model.Thing) {
			switch th.Kind {
			case model.Segment:
				segs[th.ID] = seg{th.ID, th.Addr, th.Addr + traces.Addr(th.Size)}
			case model.PoolBlock:
				want := 0
				for _, s := range segs {
					if s.lo <= th.Addr && th.Addr < s.hi {
						want = s.id
					}
				}
				bornIn[th.ID] = want
				expect("born", th, want)
			}
		},
		Died: func(th model.Thing, _ int) {
			switch th.Kind {
			case model.Segment:
				delete(segs, th.ID)
			case model.PoolBlock:
				expect("died", th, bornIn[th.ID])
			}
		},
		Closed: func(ts []model.Thing) {
			for _, th := range ts {
				if th.Kind == model.PoolBlock {
					expect("closed", th, bornIn[th.ID])
				}
			}
		},
	}
	src := &sliceSource{h: traces.Header{Format: traces.FormatName, Version: traces.Version}, evs: evs}
	if _, err := model.ReplayWatched(src, w, func(traces.Violation, uint64) {}); err != nil {
		return err
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}
