package drive_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// TestMisuseTable holds PROTOCOL.md's table "What a runtime that asks for
// misuse must refuse" to the model: each call of it is a violation of the
// kind the table names, and the model's state after it is what the
// table's last column says the model does with a refused call's event.
func TestMisuseTable(t *testing.T) {
	const a, b = traces.Addr(0x10), traces.Addr(0x20)
	e := func(op traces.Op, addr traces.Addr) traces.Event { return traces.Event{Op: op, Addr: addr} }
	enter, exit := e(traces.OpScopeEnter, 0), e(traces.OpScopeExit, 0)
	alloc := func(x traces.Addr) traces.Event { return traces.Event{Op: traces.OpAlloc, Addr: x, Size: 16} }
	param := func(x traces.Addr) traces.Event { return traces.Event{Op: traces.OpParamRegister, Name: "w", Addr: x} }
	kill := []traces.Event{e(traces.OpRelease, a), e(traces.OpFree, a)} // a dies: its record's reference released
	cases := []struct {
		row    string
		before []traces.Event
		call   traces.Event
		kind   traces.Kind
		after  string // the model's state after the call
	}{
		{"scope_exit with no scope open", nil, exit, traces.Misuse, "objects [] scopes 0 params []"},
		{"alloc with no scope open", nil, alloc(a), traces.Misuse, "objects [0x10:1] scopes 0 params []"},
		{"struct_init with no scope open", []traces.Event{enter, alloc(a), e(traces.OpUnregister, a), exit},
			traces.Event{Op: traces.OpStructInit, Addr: b, Size: 16, Fields: []traces.Addr{a}}, traces.Misuse, "objects [0x10:2 0x20:1] scopes 0 params []"},
		{"struct_init with a dead field", append([]traces.Event{enter, alloc(a)}, kill...),
			traces.Event{Op: traces.OpStructInit, Addr: b, Size: 16, Fields: []traces.Addr{a}}, traces.UseAfterFree, "objects [0x20:1] scopes 1 params []"},
		{"struct_init at NULL with a field", []traces.Event{enter, alloc(a)},
			traces.Event{Op: traces.OpStructInit, Fields: []traces.Addr{a}}, traces.Misuse, "objects [0x10:1] scopes 1 params []"},
		{"register with no scope open", []traces.Event{enter, alloc(a), e(traces.OpUnregister, a), exit}, e(traces.OpRegister, a), traces.Misuse, "objects [0x10:1] scopes 0 params []"},
		{"unregister of an object with no record", []traces.Event{enter, alloc(a), e(traces.OpUnregister, a)}, e(traces.OpUnregister, a), traces.Misuse, "objects [0x10:1] scopes 1 params []"},
		{"acquire of a dead object", append([]traces.Event{enter, alloc(a)}, kill...), e(traces.OpAcquire, a), traces.UseAfterFree, "objects [] scopes 1 params []"},
		{"release of a dead object", append([]traces.Event{enter, alloc(a)}, kill...), e(traces.OpRelease, a), traces.DoubleFree, "objects [] scopes 1 params []"},
		{"release of an address never given", []traces.Event{enter}, e(traces.OpRelease, b), traces.InvalidAddress, "objects [] scopes 1 params []"},
		{"param_register of a dead object", append([]traces.Event{enter, alloc(b), param(b), alloc(a)}, kill...), param(a), traces.UseAfterFree, "objects [0x20:2] scopes 1 params [w:0x20]"},
		{"param_register, the name's object dead", []traces.Event{enter, alloc(a), alloc(b), param(a), e(traces.OpRelease, a), e(traces.OpRelease, a), e(traces.OpFree, a)},
			param(b), traces.DoubleFree, "objects [0x20:2] scopes 1 params [w:0x20]"},
		{"param_release of a name not held", []traces.Event{enter}, traces.Event{Op: traces.OpParamRelease, Name: "w"}, traces.Misuse, "objects [] scopes 1 params []"},
		{"param_release, the name's object dead", []traces.Event{enter, alloc(a), param(a), e(traces.OpRelease, a), e(traces.OpRelease, a), e(traces.OpFree, a)},
			traces.Event{Op: traces.OpParamRelease, Name: "w"}, traces.DoubleFree, "objects [] scopes 1 params []"},
	}
	for _, tc := range cases {
		c := model.New(traces.Header{Format: traces.FormatName, Version: traces.Version, Effects: true})
		evs := append(slices.Clone(tc.before), tc.call)
		var kinds []traces.Kind
		for i := range evs {
			vs, err := c.Step(&evs[i], traces.Pos{Event: i, Line: i + 2})
			if err != nil {
				t.Fatalf("%s: event %d: %v", tc.row, i, err)
			}
			for _, v := range vs {
				if v.Event != len(evs)-1 {
					t.Fatalf("%s: a violation before the call: %v", tc.row, v)
				}
				kinds = append(kinds, v.Kind)
			}
		}
		if !slices.Equal(kinds, []traces.Kind{tc.kind}) {
			t.Errorf("%s: the model reports %v, the table says %s", tc.row, kinds, tc.kind)
		}
		if got := stateText(c.State()); got != tc.after {
			t.Errorf("%s: the model's state after the call is %s, the table says %s", tc.row, got, tc.after)
		}
	}
}

func stateText(st traces.State) string {
	var objs, params []string
	for a, n := range st.Objects {
		objs = append(objs, fmt.Sprintf("%v:%d", a, n))
	}
	for n, a := range st.Params {
		params = append(params, fmt.Sprintf("%s:%v", n, a))
	}
	slices.Sort(objs)
	slices.Sort(params)
	return fmt.Sprintf("objects %v scopes %d params %v", objs, len(st.Scopes), params)
}
