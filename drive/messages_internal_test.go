package drive

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// judgeRun runs the checker over calls and the driver's answers, as a
// driver's run does, and returns the run.
func judgeRun(calls []Call, answers []Answer) *Result {
	var c checker
	c.start((&Driver{}).header(), calls, nil)
	for i := range answers {
		c.answer(i, &answers[i])
	}
	return c.res
}

func ev(op traces.Op, addr traces.Addr) traces.Event { return traces.Event{Op: op, Addr: addr} }

// TestFailureMessages: each drive-only failure says what a driver author
// needs to fix it: a refusal, the model's state for the call; a record,
// the field that differs; a zero-sized object, the answer expected.
func TestFailureMessages(t *testing.T) {
	alloc := traces.Event{Op: traces.OpAlloc, Addr: 0x1000, Size: 16}
	cases := []struct {
		name    string
		calls   []Call
		answers []Answer
		what    string
		says    []string
	}{
		{"refusal of a correct param_release",
			[]Call{{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Handle: 1, Size: 16}, {Op: traces.OpParamRegister, Name: "w", Target: 1}, {Op: traces.OpParamRelease, Name: "w"}},
			[]Answer{{Events: []traces.Event{ev(traces.OpScopeEnter, 0)}}, {Events: []traces.Event{alloc}},
				{Events: []traces.Event{{Op: traces.OpParamRegister, Name: "w", Addr: 0x1000}}},
				{Events: []traces.Event{{Op: traces.OpParamRelease, Name: "w"}}, Refused: true, Message: "no such param"}},
			"refusal", []string{`param "w" holds 0x1000 (count 2)`, "1 scope(s) open"}},
		{"record at another address",
			[]Call{{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Handle: 1, Size: 16}, {Op: traces.OpAcquire, Target: 1}},
			[]Answer{{Events: []traces.Event{ev(traces.OpScopeEnter, 0)}}, {Events: []traces.Event{alloc}},
				{Events: []traces.Event{ev(traces.OpAcquire, 0x2000)}}},
			"record", []string{"its addr is 0x2000, where target 1 is 0x1000"}},
		{"record of another field",
			[]Call{{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Handle: 1, Size: 16}, {Op: traces.OpStructInit, Handle: 2, Size: 32, Fields: []int{1, 0}}},
			[]Answer{{Events: []traces.Event{ev(traces.OpScopeEnter, 0)}}, {Events: []traces.Event{alloc}},
				{Events: []traces.Event{{Op: traces.OpStructInit, Addr: 0x3000, Size: 32, Fields: []traces.Addr{0x1000, 0x1000}}}}},
			"record", []string{"its field 1 is 0x1000, where handle 0 is 0x0"}},
		{"zero-sized",
			[]Call{{Op: traces.OpScopeEnter}, {Op: traces.OpStructInit, Handle: 1, Size: 0, Fields: []int{0}}},
			[]Answer{{Events: []traces.Event{ev(traces.OpScopeEnter, 0)}},
				{Events: []traces.Event{{Op: traces.OpStructInit, Addr: 0x8, Fields: []traces.Addr{0}}}}},
			"zero-sized", []string{`the answer is {"op":"struct_init","addr":"0x0","size":0,"fields":["0x0"]}`}},
	}
	for _, tc := range cases {
		res := judgeRun(tc.calls, tc.answers)
		f := res.Failure
		if f == nil || f.What != tc.what {
			t.Errorf("%s: failure %v, want %s", tc.name, f, tc.what)
			continue
		}
		for _, s := range tc.says {
			if !strings.Contains(f.Message, s) {
				t.Errorf("%s: %q does not say %q", tc.name, f.Message, s)
			}
		}
	}
}

// TestStructAtNullFields: a struct at NULL whose fields are all NULL does
// nothing however its fields are written (FORMAT.md): as asked, as [], or
// left out, the answer is the same, and clean.
func TestStructAtNullFields(t *testing.T) {
	calls := []Call{{Op: traces.OpScopeEnter}, {Op: traces.OpStructInit, Handle: 1, Size: 0, Fields: []int{0, 0}}}
	for name, fields := range map[string][]traces.Addr{"as asked": {0, 0}, "[]": {}, "absent": nil} {
		res := judgeRun(calls, []Answer{{Events: []traces.Event{ev(traces.OpScopeEnter, 0)}},
			{Events: []traces.Event{{Op: traces.OpStructInit, Fields: fields}}}})
		if res.Failure != nil {
			t.Errorf("fields %s: %v", name, res.Failure)
		}
	}
	res := judgeRun(calls, []Answer{{Events: []traces.Event{ev(traces.OpScopeEnter, 0)}},
		{Events: []traces.Event{{Op: traces.OpStructInit, Fields: []traces.Addr{0x1000}}}}})
	if res.Failure == nil || res.Failure.What != "record" {
		t.Errorf("a struct at NULL answered with a field that is not NULL: %v, want a record failure", res.Failure)
	}
}
