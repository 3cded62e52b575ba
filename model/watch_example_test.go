package model_test

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// A Watch tells a view of each life as the model decides it: here an
// object whose count reaches 0 but whose free the runtime misses (a leak,
// found at the next call), a block freed, and what is still live when the
// trace closes. The leak is found at the malloc, the next call, and
// handed on once that call is done, in event order.
func ExampleReplayWatched() {
	const trace = `{"format":"tlcheck-trace","version":1,"effects":true}
{"op":"scope_enter"}
{"op":"alloc","addr":"0x1000","size":64,"site":"a.tl:2"}
{"op":"release","addr":"0x1000","site":"a.tl:3"}
{"op":"malloc","addr":"0x2000","size":16,"site":"a.tl:4"}
{"op":"free","addr":"0x2000"}
{"op":"dev_malloc","addr":"0x9000","size":4096,"site":"a.tl:5"}
`
	r, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		panic(err)
	}
	w := &model.Watch{
		Born:   func(t model.Thing) { fmt.Printf("born: %s #%d at %s\n", t.Kind, t.ID, t.Site) },
		Died:   func(t model.Thing, event int) { fmt.Printf("died: %s #%d at event %d\n", t.Kind, t.ID, event) },
		Missed: func(t model.Thing) { fmt.Printf("missed free: %s #%d\n", t.Kind, t.ID) },
		Closed: func(live []model.Thing) {
			fmt.Printf("live at close: %d, %s #%d\n", len(live), live[0].Kind, live[0].ID)
		},
	}
	rep, err := model.ReplayWatched(r, w, func(v traces.Violation, size uint64) {
		fmt.Printf("%s of object #%d (%d bytes)\n", v.Kind, v.Object, size)
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d events, %d things made\n", rep.Events, rep.Objects)
	// Output:
	// born: object #1 at a.tl:2
	// missed free: object #1
	// died: object #1 at event 2
	// born: block #2 at a.tl:4
	// leak of object #1 (64 bytes)
	// died: block #2 at event 4
	// born: device segment #3 at a.tl:5
	// live at close: 1, device segment #3
	// 6 events, 3 things made
}
