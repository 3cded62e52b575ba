package model_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tlcheck/tlcheck/traces"
)

// contractExample is the example at the end of the trace format contract.
const contractExample = `{"format":"tlcheck-trace","version":1,"effects":true}
{"op":"scope_enter"}
{"op":"alloc","addr":"0x1000","size":64,"site":"a.tl:2"}
{"op":"release","addr":"0x1000","site":"a.tl:3"}
{"op":"free","addr":"0x1000"}
{"op":"alloc","addr":"0x1000","size":64,"site":"a.tl:4"}
{"op":"param_register","name":"w","addr":"0x1000"}
{"op":"scope_exit"}
{"op":"free","addr":"0x1000"}`

// TestContractExample checks the contract's example in full: the free at
// event 7 is stale-reuse of object 2, explained by the stale record of
// object 1 made at event 1 and that object's free at event 3.
func TestContractExample(t *testing.T) {
	r, err := replayText(t, contractExample)
	if err != nil {
		t.Fatal(err)
	}
	want := []traces.Violation{{
		Kind:   traces.StaleReuse,
		Event:  7,
		Line:   9,
		Addr:   0x1000,
		Object: 2,
		Related: []traces.Related{
			{Event: 4, Line: 6, What: "allocated", Site: "a.tl:4"},
			{Event: 1, Line: 3, What: "stale record made", Site: "a.tl:2"},
			{Event: 3, Line: 5, What: "died"},
		},
	}}
	ignoreMessage := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Message" }, cmp.Ignore())
	if diff := cmp.Diff(want, r.Violations, ignoreMessage); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	if msg := r.Violations[0].Message; !strings.Contains(msg, "stale record") || !strings.Contains(msg, "object #1") {
		t.Errorf("message %q does not name the stale record of object #1", msg)
	}
	if r.Complete || r.Events != 8 || r.Objects != 2 || r.PeakLiveBytes != 64 {
		t.Errorf("report = %+v; want 8 events, 2 objects, peak 64 bytes, incomplete", r)
	}
}

func TestEffects(t *testing.T) {
	runScenarios(t, []scenario{
		{"clean", hdrE + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"alloc","addr":"0x200","size":32}
{"op":"struct_init","addr":"0x300","size":16,"fields":["0x100","0x200"]}
{"op":"param_register","name":"w","addr":"0x300"}
{"op":"scope_exit"}
{"op":"param_release","name":"w"}
{"op":"free","addr":"0x200"}
{"op":"free","addr":"0x300"}
{"op":"free","addr":"0x100"}
{"op":"malloc","addr":"0x400","size":8}
{"op":"free","addr":"0x400"}
{"op":"end"}`, []string{"leaked 0 0", "complete true"}},
		{"premature free", hdrE + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"free","addr":"0x100"}
{"op":"scope_exit"}
{"op":"end"}`, []string{"premature-free 2 0x100", "leaked 0 0", "complete true"}},
		{"premature free of a struct frees its fields", hdrE + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"unregister","addr":"0x100"}
{"op":"struct_init","addr":"0x300","size":16,"fields":["0x100"]}
{"op":"release","addr":"0x100"}
{"op":"free","addr":"0x300"}
{"op":"free","addr":"0x100"}
{"op":"scope_exit"}
{"op":"end"}`, []string{"premature-free 5 0x300", "leaked 0 0", "complete true"}},
		{"missed free", hdrE + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"alloc","addr":"0x200","size":64}
{"op":"scope_exit"}
{"op":"free","addr":"0x200"}
{"op":"end"}`, []string{"leak 3 0x100", "leaked 1 64", "complete true"}},
		{"missed free comes before the later frees' violations", hdrE + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"alloc","addr":"0x200","size":64}
{"op":"release","addr":"0x100"}
{"op":"free","addr":"0x200"}
{"op":"scope_exit"}`, []string{"leak 3 0x100", "premature-free 4 0x200", "leaked 0 0", "complete false"}},
		{"a due free cut off by the end of the file is not claimed", hdrE + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"scope_exit"}`, []string{"leaked 0 0", "complete false"}},
		{"a due free missed at end counts as leaked", hdrE + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"scope_exit"}
{"op":"end"}`, []string{"leak 2 0x100", "leaked 1 64", "complete true"}},
		{"a late free is the object's free, not a double free", hdrE + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"alloc","addr":"0x200","size":32}
{"op":"release","addr":"0x100"}
{"op":"release","addr":"0x200"}
{"op":"free","addr":"0x200"}
{"op":"free","addr":"0x100"}
{"op":"free","addr":"0x100"}
{"op":"scope_exit"}
{"op":"end"}`, []string{"leak 3 0x100", "double-free 7 0x100", "leaked 0 0", "complete true"}},
		{"a missed free without end is reported, the totals stay zero", hdrE + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"release","addr":"0x100"}
{"op":"scope_exit"}`, []string{"leak 2 0x100", "leaked 0 0", "complete false"}},
		{"double free of an object", hdrE + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"scope_exit"}
{"op":"free","addr":"0x100"}
{"op":"free","addr":"0x100"}
{"op":"end"}`, []string{"double-free 4 0x100", "leaked 0 0", "complete true"}},
		{"stale record frees the new owner", hdrE + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64,"site":"m.tl:1"}
{"op":"release","addr":"0x100","site":"m.tl:2"}
{"op":"free","addr":"0x100"}
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64,"site":"m.tl:3"}
{"op":"unregister","addr":"0x100"}
{"op":"scope_exit"}
{"op":"param_register","name":"x","addr":"0x100"}
{"op":"release","addr":"0x100"}
{"op":"scope_exit"}
{"op":"free","addr":"0x100"}
{"op":"end"}`, []string{"stale-reuse 11 0x100", "leaked 0 0", "complete true"}},
	})
}
