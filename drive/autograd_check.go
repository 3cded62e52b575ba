package drive

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/properties/autograd"
	"github.com/tlcheck/tlcheck/traces"
)

// A layer-5 program is checked differently from a layer-2 one: its calls
// are not trace events, so an answer has no "call's own event"; its events
// (layers 2 and 5: the storages as managed objects, saves, unpacks,
// unsaves, bumps) go to the model as they come, and the verdicts the model
// reports at a call's events must be exactly the kinds the driver refused
// the call with. A runtime that refuses a backward because a saved tensor
// was modified is checked by the model reporting saved-modified there; one
// that accepts a call is checked by the model reporting nothing there. A
// refusal that names no kind (a shape mismatch, an overlap, a non-scalar
// backward) is none of the model's business, and the model must then be
// silent too.

// A refused call records, as its last event, the access the runtime
// refused: the bump of a leaf's storage, the unpack of a saved tensor
// modified or let go. The model judges it, but it did not happen (PyTorch
// checks before it writes), so it must not change what the model knows:
// it is judged on a scratch model that has taken the program's other
// events, and the model of the run never takes it (nor does the trace
// written for a finding: see Result.WriteTrace).

// modelRule, where set, stands between the model and the checker of
// layer-5 programs: it may change an event before the model takes it and
// the violations the model reports for it. Only tests set it, to prove
// that a wrong rule of the model is caught (TestTorchCatchesWrongModel).
type modelRule func(ev *traces.Event, step func(*traces.Event) []traces.Violation) []traces.Violation

// answerTensor takes the driver's answer to layer-5 call i.
func (c *checker) answerTensor(i int, a *Answer) {
	call := &c.res.TensorCalls[i]
	out := Outcome{Event: -1, Events: len(a.Events), Refused: a.Refused, Message: a.Message, Tensor: a.Tensor, Grads: a.Grads}
	if len(a.Kinds) > 0 {
		out.Kinds = slices.Clone(a.Kinds)
	}
	if len(a.Events) > 0 {
		out.Event = len(c.res.Trace)
	}
	c.res.Outcomes = append(c.res.Outcomes, out)
	var got []traces.Kind // what the model reports at this call's events
	step := func(ev *traces.Event) []traces.Violation {
		n := len(c.res.Trace) - 1
		vs, err := c.chk.Step(ev, traces.Pos{Event: n, Line: n + 2})
		if err != nil {
			c.mismatchTensor(i, -1, "input", "the model cannot take the runtime's event %d: %v", n, err)
		}
		return vs
	}
	attempt := -1
	if a.Refused && len(a.Kinds) > 0 {
		attempt = len(a.Events) - 1
	}
	for k := range a.Events {
		c.res.Trace = append(c.res.Trace, a.Events[k])
		c.eventCall = append(c.eventCall, i)
		n := len(c.res.Trace) - 1
		ev := &c.res.Trace[n]
		judge := step
		if k == attempt {
			judge = c.probe
			c.attempts = append(c.attempts, n)
		}
		var vs []traces.Violation
		if c.rule != nil {
			vs = c.rule(ev, judge)
		} else {
			vs = judge(ev)
		}
		c.keepTensor(i, vs, &got)
	}
	if call.Op == TensorEnd {
		c.keepTensor(i, c.chk.Close(), &got)
	}
	c.judgeTensor(i, got)
	switch {
	case !a.Refused && a.Tensor == nil && (call.Op.Makes() || call.Op.InPlace()):
		c.mismatchTensor(i, out.Event, "record", "the answer to %s, done, has no \"tensor\"", call.Op)
	case call.Op == TensorBackward && a.Grads == nil:
		c.mismatchTensor(i, out.Event, "record", "the answer to backward has no \"grads\"")
	}
}

// probe returns what the model reports for the last event of the trace,
// a refused access, without the run's model taking it: a scratch model
// takes the run's events so far but the refused accesses, then it.
func (c *checker) probe(ev *traces.Event) []traces.Violation {
	if c.scratch == nil {
		c.scratch = model.New(c.res.Header)
	} else {
		c.scratch.Reset(c.res.Header)
	}
	n := len(c.res.Trace) - 1
	skip := c.attempts
	for k := range n {
		if len(skip) > 0 && skip[0] == k {
			skip = skip[1:]
			continue
		}
		c.scratch.Step(&c.res.Trace[k], traces.Pos{Event: k, Line: k + 2}) // its verdicts are the run's model's
	}
	vs, err := c.scratch.Step(ev, traces.Pos{Event: n, Line: n + 2})
	if err != nil {
		c.mismatchTensor(c.eventCall[n], n, "input", "the model cannot take the runtime's event %d: %v", n, err)
	}
	return vs
}

// keepTensor notes the model's violations at call i.
func (c *checker) keepTensor(i int, vs []traces.Violation, got *[]traces.Kind) {
	for _, v := range vs {
		v.Related = slices.Clone(v.Related)
		c.verdicts = append(c.verdicts, verdict{v, i})
		*got = append(*got, v.Kind)
	}
}

// judgeTensor holds the kinds the model reported at call i to the
// driver's, by the autograd language's one refusal judge: the same set,
// none where the driver accepted the call.
func (c *checker) judgeTensor(i int, got []traces.Kind) {
	out := c.res.Outcomes[i]
	var mine []verdict
	for _, v := range c.verdicts {
		if v.call == i {
			mine = append(mine, v)
		}
	}
	reported := make([]traces.Kind, len(mine))
	for k, v := range mine {
		reported[k] = v.Kind
	}
	unreported, unexplained := autograd.JudgeRefusal(out.Refused, out.Kinds, reported)
	if unexplained >= 0 {
		v := mine[unexplained]
		msg := fmt.Sprintf("the model reports %s at event %d: %s", v.Kind, v.Event, v.Message)
		switch {
		case !out.Refused:
			msg += "; the runtime accepted the call"
		case len(out.Kinds) == 0:
			msg += fmt.Sprintf("; the runtime refused the call (%q) as none of the model's business", out.Message)
		default:
			msg += fmt.Sprintf("; the runtime refused the call as %v (%q)", out.Kinds, out.Message)
		}
		c.mismatchTensor(i, v.Event, string(v.Kind), "%s", msg)
	}
	if unreported != "" {
		c.mismatchTensor(i, out.Event, "refusal", "the runtime refused %s as %s (%q); the model reports %s",
			c.res.TensorCalls[i].Op, unreported, out.Message, kindList(got))
	}
	c.verdicts = c.verdicts[:0]
}

func kindList(ks []traces.Kind) string {
	if len(ks) == 0 {
		return "nothing"
	}
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

func (c *checker) mismatchTensor(i, event int, what, format string, args ...any) {
	c.fail(&Failure{What: what, Call: i, Event: event, Message: fmt.Sprintf(format, args...),
		sig: what + "@" + string(c.res.TensorCalls[i].Op)})
}
