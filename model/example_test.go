package model_test

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// Replay checks a whole trace. Here a scope record outlives its object: the
// runtime frees the object at the same address when the scope exits.
func ExampleReplay() {
	const trace = `{"format":"tlcheck-trace","version":1,"effects":true}
{"op":"scope_enter"}
{"op":"alloc","addr":"0x1000","size":64,"site":"a.tl:2"}
{"op":"release","addr":"0x1000","site":"a.tl:3"}
{"op":"free","addr":"0x1000"}
{"op":"alloc","addr":"0x1000","size":64,"site":"a.tl:4"}
{"op":"param_register","name":"w","addr":"0x1000"}
{"op":"scope_exit"}
{"op":"free","addr":"0x1000"}
`
	r, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		panic(err)
	}
	report, err := model.Replay(r)
	if err != nil {
		panic(err)
	}
	for _, v := range report.Violations {
		fmt.Printf("%s at event %d (line %d): %s\n", v.Kind, v.Event, v.Line, v.Message)
		for _, rel := range v.Related {
			fmt.Println(strings.TrimSpace(fmt.Sprintf("  event %d %s %s", rel.Event, rel.What, rel.Site)))
		}
	}
	fmt.Printf("%d events, %d objects, complete: %t\n", report.Events, report.Objects, report.Complete)
	// Output:
	// stale-reuse at event 7 (line 9): free of object #2 (64 bytes, allocated at event 4 a.tl:4), which still has 1 reference: the scope exit at event 6 held a stale record (made at event 1 a.tl:2) of object #1 at the same address, which died at event 3
	// event 4 allocated a.tl:4
	// event 1 stale record made a.tl:2
	// event 3 died
	// 8 events, 2 objects, complete: false
}

// A Checker checks one event at a time and shows the state a runtime must
// have after each.
func ExampleChecker_State() {
	c := model.New(traces.Header{Format: traces.FormatName, Version: traces.Version})
	steps := []traces.Event{
		{Op: traces.OpScopeEnter},
		{Op: traces.OpAlloc, Addr: 0x1000, Size: 64},
		{Op: traces.OpParamRegister, Name: "w", Addr: 0x1000},
		{Op: traces.OpRelease, Addr: 0x1000},
		{Op: traces.OpRelease, Addr: 0x1000, Site: "b.tl:9"},
		{Op: traces.OpRelease, Addr: 0x1000, Site: "b.tl:12"},
	}
	for i := range steps {
		vs, err := c.Step(&steps[i], traces.Pos{Event: i, Line: i + 2})
		if err != nil {
			panic(err)
		}
		for _, v := range vs {
			fmt.Println(v.Kind, v.Message)
		}
		if i == 2 {
			fmt.Printf("%+v\n", c.State())
		}
	}
	// Output:
	// {Objects:map[0x1000:2] Scopes:[[0x1000]] Params:map[w:0x1000]}
	// double-free release of object #1 (64 bytes, allocated at event 1), which died at event 4 b.tl:9
}
