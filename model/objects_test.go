package model_test

import (
	"reflect"
	"testing"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

func TestObjects(t *testing.T) {
	runScenarios(t, []scenario{
		{"clean", hdr + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"acquire","addr":"0x100"}
{"op":"release","addr":"0x100"}
{"op":"alloc","addr":"0x0","size":0}
{"op":"release","addr":"0x0"}
{"op":"struct_init","addr":"0x0","size":0,"fields":[]}
{"op":"scope_exit"}
{"op":"end"}`, []string{"leaked 0 0", "complete true"}},
		{"double release", hdr + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"release","addr":"0x100"}
{"op":"release","addr":"0x100"}
{"op":"scope_exit"}
{"op":"end"}`, []string{"double-free 3 0x100", "leaked 0 0", "complete true"}},
		{"acquire after death", hdr + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"release","addr":"0x100"}
{"op":"acquire","addr":"0x100"}
{"op":"register","addr":"0x100"}
{"op":"scope_exit"}`, []string{"use-after-free 3 0x100", "use-after-free 4 0x100", "leaked 0 0", "complete false"}},
		{"release of nothing and of a block", hdr + `
{"op":"malloc","addr":"0x200","size":8}
{"op":"release","addr":"0x300"}
{"op":"release","addr":"0x200"}
{"op":"free","addr":"0x200"}`, []string{"invalid-address 1 0x300", "invalid-address 2 0x200", "leaked 0 0", "complete false"}},
		{"address reuse cannot fool it", hdr + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"release","addr":"0x100"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"scope_exit"}
{"op":"end"}`, []string{"leaked 0 0", "complete true"}},
		{"misuse without scope", hdr + `
{"op":"scope_exit"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"register","addr":"0x100"}
{"op":"struct_init","addr":"0x0","size":0,"fields":["0x100"]}
{"op":"end"}`, []string{"misuse 0 0x0", "misuse 1 0x100", "misuse 2 0x100", "misuse 3 0x0",
			"leak 4 0x100", "leaked 1 64", "complete true"}},
		{"register and unregister", hdr + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"scope_enter"}
{"op":"register","addr":"0x100"}
{"op":"unregister","addr":"0x100"}
{"op":"unregister","addr":"0x100"}
{"op":"unregister","addr":"0x100"}
{"op":"scope_exit"}
{"op":"scope_exit"}
{"op":"release","addr":"0x100"}
{"op":"end"}`, []string{"misuse 6 0x100", "leaked 0 0", "complete true"}},
		{"params", hdr + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"alloc","addr":"0x200","size":32}
{"op":"param_register","name":"w","addr":"0x100"}
{"op":"param_register","name":"w","addr":"0x100"}
{"op":"param_register","name":"w","addr":"0x200"}
{"op":"scope_exit"}
{"op":"param_release","name":"w"}
{"op":"param_release","name":"w"}
{"op":"end"}`, []string{"misuse 8 0x0", "leaked 0 0", "complete true"}},
		{"param of a dead object", hdr + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"param_register","name":"w","addr":"0x100"}
{"op":"release","addr":"0x100"}
{"op":"release","addr":"0x100"}
{"op":"param_release","name":"w"}
{"op":"scope_exit"}
{"op":"end"}`, []string{"double-free 5 0x100", "leaked 0 0", "complete true"}},
		{"struct death releases fields", hdr + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"alloc","addr":"0x200","size":32}
{"op":"struct_init","addr":"0x300","size":16,"fields":["0x100","0x0","0x200"]}
{"op":"unregister","addr":"0x100"}
{"op":"unregister","addr":"0x200"}
{"op":"release","addr":"0x100"}
{"op":"release","addr":"0x200"}
{"op":"scope_exit"}
{"op":"read","addr":"0x100"}
{"op":"end"}`, []string{"use-after-free 9 0x100", "leaked 0 0", "complete true"}},
		{"dying struct releases a dead field", hdr + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"struct_init","addr":"0x300","size":16,"fields":["0x100"]}
{"op":"release","addr":"0x100"}
{"op":"release","addr":"0x100"}
{"op":"release","addr":"0x300"}
{"op":"scope_exit"}
{"op":"end"}`, []string{"double-free 5 0x100", "leaked 0 0", "complete true"}},
		{"struct field of a dead object", hdr + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"release","addr":"0x100"}
{"op":"struct_init","addr":"0x300","size":16,"fields":["0x100","0x400"]}
{"op":"scope_exit"}
{"op":"end"}`, []string{"use-after-free 3 0x100", "invalid-address 3 0x400", "leaked 0 0", "complete true"}},
		{"reachability at end", hdr + `
{"op":"scope_enter"}
{"op":"alloc","addr":"0x100","size":64}
{"op":"alloc","addr":"0x200","size":32}
{"op":"struct_init","addr":"0x300","size":16,"fields":["0x100"]}
{"op":"alloc","addr":"0x400","size":8}
{"op":"param_register","name":"model","addr":"0x300"}
{"op":"acquire","addr":"0x400"}
{"op":"scope_exit"}
{"op":"scope_enter"}
{"op":"alloc","addr":"0x500","size":4}
{"op":"end"}`, []string{"misuse 10 0x0", "leak 10 0x400", "leaked 1 8", "complete true"}},
		{"overlapping objects", hdr + `
{"op":"scope_enter"}
{"op":"malloc","addr":"0x100","size":64}
{"op":"alloc","addr":"0x120","size":64}
{"op":"scope_exit"}
{"op":"free","addr":"0x100"}
{"op":"end"}`, []string{"overlap 2 0x120", "leaked 0 0", "complete true"}},
	})
}

// TestStateIntoReuses: StateInto, refilling one State event after event
// as scopes open and close, gives what State gives afresh each time.
func TestStateIntoReuses(t *testing.T) {
	evs := []traces.Event{
		{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Addr: 0x100, Size: 16},
		{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Addr: 0x200, Size: 16},
		{Op: traces.OpRegister, Addr: 0x100}, {Op: traces.OpParamRegister, Name: "w", Addr: 0x200},
		{Op: traces.OpScopeExit}, {Op: traces.OpScopeEnter}, {Op: traces.OpScopeEnter},
		{Op: traces.OpAlloc, Addr: 0x300, Size: 16}, {Op: traces.OpScopeExit}, {Op: traces.OpScopeExit},
		{Op: traces.OpParamRelease, Name: "w"}, {Op: traces.OpScopeExit},
	}
	c := model.New(traces.Header{})
	var st traces.State
	for i := range evs {
		if _, err := c.Step(&evs[i], traces.Pos{Event: i}); err != nil {
			t.Fatal(err)
		}
		c.StateInto(&st)
		if want := c.State(); !reflect.DeepEqual(st, want) {
			t.Fatalf("after event %d (%v): StateInto gave %v, State %v", i, evs[i].Op, st, want)
		}
	}
}

// TestStateShowsTheNewerOfTwoAtOneAddress: where two live objects share
// an address (an alloc over a live one, an overlap), State shows the
// newer one's count, whichever the model's books list first.
func TestStateShowsTheNewerOfTwoAtOneAddress(t *testing.T) {
	evs := []traces.Event{
		{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Addr: 0x100, Size: 16},
		{Op: traces.OpAcquire, Addr: 0x100}, {Op: traces.OpAcquire, Addr: 0x100},
		{Op: traces.OpAlloc, Addr: 0x100, Size: 16}, {Op: traces.OpAlloc, Addr: 0x200, Size: 16},
	}
	c := model.New(traces.Header{})
	for i := range evs {
		if _, err := c.Step(&evs[i], traces.Pos{Event: i}); err != nil {
			t.Fatal(err)
		}
	}
	st := c.State()
	if want := map[traces.Addr]int{0x100: 1, 0x200: 1}; !reflect.DeepEqual(st.Objects, want) {
		t.Errorf("objects %v, want %v (the newer object at 0x100, with its one reference)", st.Objects, want)
	}
}
