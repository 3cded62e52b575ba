package drive

import (
	"fmt"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// ModelJudge judges a driver's runs for Diff (DiffOptions.JudgeA, JudgeB): it replays the
// events a driver answered to a layer-5 program through the model and
// fails the run at the first violation that the program does not explain.
// A violation at an event of a call the driver refused is the program's
// (PyTorch refuses a saved tensor modified, a leaf written in place, a
// second backward, and the model sees the same misuse in the events the
// refusal recorded); any other (a leak at end, which drops every handle,
// a use after free, a free of what is still referred to) is the
// runtime's.
func ModelJudge(calls []TensorCall, answers []Answer) *Failure {
	h := traces.Header{Format: traces.FormatName, Version: traces.Version, Effects: true}
	chk := model.New(h)
	n := 0
	var fail *Failure
	judge := func(i int, vs []traces.Violation, refused bool) {
		for _, v := range vs {
			if fail != nil || refused && v.Kind != traces.Leak {
				continue
			}
			fail = &Failure{What: string(v.Kind), Call: i, Event: v.Event,
				Message: fmt.Sprintf("%s at event %d: %s", v.Kind, v.Event, v.Message), sig: string(v.Kind) + "@" + string(calls[i].Op)}
		}
	}
	for i := range answers {
		a := &answers[i]
		for k := range a.Events {
			vs, err := chk.Step(&a.Events[k], traces.Pos{Event: n, Line: n + 2})
			if err != nil && fail == nil {
				fail = &Failure{What: "input", Call: i, Event: n, Message: fmt.Sprintf("the model cannot take event %d: %v", n, err), sig: "input@" + string(calls[i].Op)}
			}
			n++
			judge(i, vs, a.Refused)
		}
		if calls[i].Op == TensorEnd {
			judge(i, chk.Close(), false)
		}
		if fail != nil {
			return fail
		}
	}
	return nil
}
