package model_test

import (
	"fmt"
	"testing"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// TestWatchTellsEveryLife: on every corpus trace, a Watch hears of each
// thing the model made once as born, once as dead or live at close, never
// both, and of as many missed frees as the model counts (less those freed
// late); the live bytes it sums from births and deaths peak where the
// model's do. A hook call left out of a rule (a kill that tells no one)
// fails here.
func TestWatchTellsEveryLife(t *testing.T) {
	for _, f := range loadCorpus(t) {
		t.Run(f.name, func(t *testing.T) {
			if err := watchAgrees(mustStream(f.trace)); err != nil {
				t.Error(err)
			}
		})
	}
}

func watchAgrees(src traces.Source) error {
	born, dead := map[int]bool{}, map[int]bool{}
	var live, peak uint64
	var missed traces.Totals
	var errs []error
	w := &model.Watch{
		Born: func(th model.Thing) {
			if born[th.ID] {
				errs = append(errs, fmt.Errorf("#%d born twice", th.ID))
			}
			born[th.ID] = true
			if th.Kind.Counted() {
				live += th.Size
				peak = max(peak, live)
			}
		},
		Died: func(th model.Thing, event int) {
			if !born[th.ID] || dead[th.ID] {
				errs = append(errs, fmt.Errorf("#%d died at event %d, born %t, dead already %t", th.ID, event, born[th.ID], dead[th.ID]))
			}
			dead[th.ID] = true
			if th.Kind.Counted() {
				live -= th.Size
			}
		},
		Missed: func(th model.Thing) {
			missed.Objects++
			missed.Bytes += th.Size
		},
		FreedLate: func(th model.Thing) {
			missed.Objects--
			missed.Bytes -= th.Size
		},
		Closed: func(ts []model.Thing) {
			for _, th := range ts {
				if !born[th.ID] || dead[th.ID] {
					errs = append(errs, fmt.Errorf("#%d live at close, born %t, dead %t", th.ID, born[th.ID], dead[th.ID]))
				}
				dead[th.ID] = true
			}
		},
	}
	rep, err := model.ReplayWatched(src, w, func(traces.Violation, uint64) {})
	if err != nil {
		return nil // input the model refuses
	}
	if len(errs) > 0 {
		return errs[0]
	}
	if len(born) != rep.Objects || len(dead) != rep.Objects {
		return fmt.Errorf("%d born and %d dead or live at close; the model made %d", len(born), len(dead), rep.Objects)
	}
	if peak != rep.PeakLiveBytes {
		return fmt.Errorf("the watched live bytes peak at %d, the model's at %d", peak, rep.PeakLiveBytes)
	}
	if rep.Complete && (missed.Objects > rep.Leaked.Objects || missed.Bytes > rep.Leaked.Bytes) {
		return fmt.Errorf("%+v missed, more than the %+v the model leaked", missed, rep.Leaked)
	}
	return nil
}

// TestDeviceBytes: allocated counts pool blocks, reserved segments and
// mapped ranges, each at its peak and at the end, from a Watch.
func TestDeviceBytes(t *testing.T) {
	var d model.DeviceBytes
	w := &model.Watch{Born: d.Born, Died: func(th model.Thing, _ int) { d.Died(th) }}
	src := mustStream([]byte(`{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":1000}
{"op":"dev_malloc","addr":"0x1000000","size":4096}
{"op":"dev_map","addr":"0x2000000","size":8192}
{"op":"pool_get","addr":"0x1000000","size":1024}
{"op":"pool_get","addr":"0x2000000","size":2048}
{"op":"pool_put","addr":"0x1000000"}
{"op":"dev_unmap","addr":"0x2001000","size":4096}
`))
	if _, err := model.ReplayWatched(src, w, func(traces.Violation, uint64) {}); err != nil {
		t.Fatal(err)
	}
	want := model.DeviceBytes{PeakAllocated: 3072, Allocated: 2048, PeakReserved: 12288, Reserved: 8192}
	if d != want {
		t.Errorf("%+v, want %+v", d, want)
	}
}
