package model_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// TestReplayFuncOrder holds ReplayFunc to what Step reports, sorted by
// event the plain way (a stable sort of everything at the end), on random
// traces with effects, where missed frees are found late: the orderer
// keeps only the violations of the frees since the last call, yet hands
// everything on in the same order, each with the size of what it names.
func TestReplayFuncOrder(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 5))
		var evs []traces.Event
		addr := func() traces.Addr { return traces.Addr(0x1000 + 0x40*rng.IntN(6)) }
		ops := []traces.Op{traces.OpScopeEnter, traces.OpScopeExit, traces.OpAlloc, traces.OpRelease,
			traces.OpAcquire, traces.OpFree, traces.OpFree, traces.OpFree, traces.OpMalloc, traces.OpRead}
		for i := range 10 + rng.IntN(80) {
			evs = append(evs, traces.Event{Op: ops[rng.IntN(len(ops))], Addr: addr(), Size: 64, Site: fmt.Sprint("o.tl:", i)})
		}
		if rng.IntN(2) == 0 {
			evs = append(evs, traces.Event{Op: traces.OpEnd})
		}
		h := traces.Header{Effects: true}

		c := model.New(h)
		var want []traces.Violation
		for i := range evs {
			vs, err := c.Step(&evs[i], traces.Pos{Event: i, Line: i + 2})
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, vs...)
		}
		want = append(want, c.Close()...)
		slices.SortStableFunc(want, func(a, b traces.Violation) int { return a.Event - b.Event })

		var got []traces.Violation
		rep, err := model.ReplayFunc(&sliceSource{h: h, evs: evs}, func(v traces.Violation, size uint64) {
			got = append(got, v)
			if v.Object != 0 && size != 64 {
				t.Errorf("seed %d: %s at event %d names a thing of %d bytes, want 64", seed, v.Kind, v.Event, size)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Violations != nil {
			t.Errorf("seed %d: ReplayFunc's report lists violations", seed)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d: ReplayFunc's order differs from Step's, sorted (-want +got):\n%s", seed, diff)
		}
	}
}
