package drive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// A tfjs program is checked as a layer-5 one is: its calls are not trace
// events, so an answer has no call's own event; its events (layers 1 and
// 2: buffers and tensors as managed objects, variables as parameters,
// tidies as scopes, reads) go to the model as they come, and the kinds the
// model reports at a call's events must be exactly the kinds the driver
// refused the call with, none where it did the call. At end the model's
// leak check runs, and tfjs's own counters (the answer's "memory") must be
// back where the program started.

// TfjsMemory is how far tfjs's memory counters are, after end, from where
// they stood when the program started (tf.memory(), and the number of
// registered variables): all zero for a program that disposed all it made.
type TfjsMemory struct {
	NumTensors     int `json:"numTensors"`
	NumDataBuffers int `json:"numDataBuffers"`
	NumBytes       int `json:"numBytes"`
	Variables      int `json:"variables"`
}

// TfjsResult is one run of a tfjs program on a driver.
type TfjsResult struct {
	Calls    []TfjsCall
	Outcomes []Outcome // per call answered, in order
	Header   traces.Header
	Trace    []traces.Event
	Memory   *TfjsMemory // from the answer to end
	Failure  *Failure
}

// Tfjs reports whether the driver takes tfjs programs (its hello's
// "programs" lists "tfjs").
func (h Hello) Tfjs() bool { return slices.Contains(h.Programs, "tfjs") }

// RunTfjs runs a tfjs program on the driver, starting it again first if
// the last run broke it: a reset, the calls, each answer checked against
// the model as it comes. A program that is not well formed
// (CheckTfjsProgram) is an error, as is a driver that does not take tfjs
// programs.
func (r *Runner) RunTfjs(calls []TfjsCall) (*TfjsResult, error) {
	if err := r.ensure(); err != nil {
		return nil, err
	}
	return r.d.RunTfjs(calls)
}

// RunTfjs runs a tfjs program on the driver (see Runner.RunTfjs).
func (d *Driver) RunTfjs(calls []TfjsCall) (*TfjsResult, error) {
	bt, err := d.sendTfjs(calls)
	if err != nil {
		return nil, err
	}
	return d.receiveTfjs(bt, calls), nil
}

// sendTfjs writes a tfjs program to the driver: the reset and the calls.
func (d *Driver) sendTfjs(calls []TfjsCall) (*batch, error) {
	if !d.hello.Tfjs() {
		return nil, fmt.Errorf(`drive: the driver does not take tfjs programs (its hello's "programs" is %v)`, d.hello.Programs)
	}
	if err := CheckTfjsProgram(calls); err != nil {
		return nil, err
	}
	if d.broken != nil {
		return nil, fmt.Errorf("drive: the driver is broken: %w", d.broken)
	}
	return d.sendBatch(&batch{}, len(calls), func(b []byte, i int, id int64) []byte {
		return calls[i].appendJSON(b, id)
	}), nil
}

// tfjsChecker judges the answers to one tfjs program.
type tfjsChecker struct {
	chk *model.Checker
	res *TfjsResult
}

func (d *Driver) receiveTfjs(bt *batch, calls []TfjsCall) *TfjsResult {
	h := d.header()
	// The model of the layer-2 checker serves: a driver runs one program
	// at a time.
	if d.check.chk == nil {
		d.check.chk = model.New(h)
	} else {
		d.check.chk.Reset(h)
	}
	c := &tfjsChecker{chk: d.check.chk, res: &TfjsResult{Calls: calls, Header: h}}
	res := c.res
	fail := func(f *Failure) {
		if res.Failure == nil {
			res.Failure = f
		}
	}
	if bt.trouble != nil {
		fail(&Failure{What: string(bt.trouble.Kind), Call: 0, Event: -1, Message: bt.trouble.Error(), sig: string(bt.trouble.Kind)})
		return res
	}
	var a Answer
	for i := -1; i < len(calls); i++ {
		id := bt.first + 1 + int64(i)
		what := func() string {
			if i < 0 {
				return "the answer to the reset"
			}
			return fmt.Sprintf("the answer to call %d (%s, id %d)", i, calls[i].Op, id)
		}
		line, t := d.readLine(what)
		if t == nil {
			t = d.parseAnswer(line, &a, id, what)
		}
		if t == nil && len(res.Trace)+len(a.Events) > maxProgramEvents {
			d.kill()
			t = d.trouble(TroubleProtocol, fmt.Sprintf("more than %d events in one program, at %s", maxProgramEvents, what()))
		}
		if t == nil && i < 0 && (a.Refused || len(a.Events) > 0) {
			t = d.trouble(TroubleProtocol, fmt.Sprintf("the answer to the reset, %s, has events or a refusal", clip(line)))
		}
		if t != nil {
			fail(&Failure{What: string(t.Kind), Call: max(i, 0), Event: -1, Message: t.Error(), sig: string(t.Kind)})
			break
		}
		if i < 0 {
			continue
		}
		if calls[i].Op == TfjsEnd {
			res.Memory = parseMemory(line)
		}
		if f := c.answer(i, &a); f != nil {
			fail(f)
		}
	}
	if res.Failure != nil {
		res.Failure.Stderr = d.stderr.settled()
	}
	return res
}

// answer takes the answer to call i and returns the failure it shows.
func (c *tfjsChecker) answer(i int, a *Answer) *Failure {
	res := c.res
	call := &res.Calls[i]
	out := Outcome{Event: -1, Events: len(a.Events), Refused: a.Refused, Message: a.Message}
	if len(a.Kinds) > 0 {
		out.Kinds = slices.Clone(a.Kinds)
	}
	if len(a.Events) > 0 {
		out.Event = len(res.Trace)
	}
	res.Outcomes = append(res.Outcomes, out)
	var got []traces.Violation
	for k := range a.Events {
		res.Trace = append(res.Trace, a.Events[k])
		n := len(res.Trace) - 1
		vs, err := c.chk.Step(&res.Trace[n], traces.Pos{Event: n, Line: n + 2})
		if err != nil {
			return c.failure(i, n, "input", "the model cannot take the runtime's event %d: %v", n, err)
		}
		got = append(got, vs...)
	}
	if call.Op == TfjsEnd {
		got = append(got, c.chk.Close()...)
	}
	reported := make([]traces.Kind, len(got))
	for k, v := range got {
		reported[k] = v.Kind
	}
	unreported, unexplained := model.JudgeRefusal(out.Refused, out.Kinds, reported)
	if unexplained >= 0 {
		v := got[unexplained]
		msg := fmt.Sprintf("the model reports %s at event %d: %s", v.Kind, v.Event, v.Message)
		switch {
		case !out.Refused:
			msg += "; tfjs did the call"
		case len(out.Kinds) == 0:
			msg += fmt.Sprintf("; tfjs refused the call with %q, which is not its refusal of a misuse", out.Message)
		default:
			msg += fmt.Sprintf("; tfjs refused the call as %v (%q)", out.Kinds, out.Message)
		}
		return c.failure(i, v.Event, string(v.Kind), "%s", msg)
	}
	if unreported != "" {
		return c.failure(i, out.Event, "refusal", "tfjs refused %s as %s (%q); the model finds nothing wrong", call.Op, unreported, out.Message)
	}
	if out.Refused && len(out.Kinds) == 0 {
		// A refusal that is not tfjs's refusal of a misuse (a TypeError
		// from inside tfjs, a shape error) of a well-formed call: tfjs
		// broke on a call its contract says it takes.
		return c.failure(i, out.Event, "refusal", "tfjs failed on %s, which its contract takes: %q", call.Op, out.Message)
	}
	if call.Op == TfjsEnd {
		m := res.Memory
		switch {
		case m == nil:
			return c.failure(i, out.Event, "record", "the answer to end has no \"memory\"")
		case *m != TfjsMemory{}:
			return c.failure(i, out.Event, "memory", "after end, tf.memory() is not where the program started: numTensors %+d, numDataBuffers %+d, numBytes %+d, registered variables %+d",
				m.NumTensors, m.NumDataBuffers, m.NumBytes, m.Variables)
		}
	}
	return nil
}

func (c *tfjsChecker) failure(i, event int, what, format string, args ...any) *Failure {
	return &Failure{What: what, Call: i, Event: event, Message: fmt.Sprintf(format, args...),
		sig: what + "@" + string(c.res.Calls[i].Op)}
}

// parseMemory reads the "memory" of the answer to end, or nil. It reads
// only that object (a flat one of integers), not the whole line, whose
// events the answer's parser has read.
func parseMemory(line []byte) *TfjsMemory {
	i := bytes.Index(line, []byte(`"memory":{`))
	if i < 0 {
		return nil
	}
	rest := line[i+len(`"memory":`):]
	j := bytes.IndexByte(rest, '}')
	if j < 0 {
		return nil
	}
	var m TfjsMemory
	if err := json.Unmarshal(rest[:j+1], &m); err != nil {
		return nil
	}
	return &m
}
