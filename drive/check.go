package drive

import (
	"fmt"
	"slices"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/properties/autograd"
	"github.com/tlcheck/tlcheck/traces"
)

// Result is one run of calls on a driver: what its runtime recorded and
// answered, and the failure, if the run showed one.
type Result struct {
	Calls       []Call       // a program of layers 2 and 3
	TensorCalls []TensorCall // a layer-5 program (Calls is then empty)
	Outcomes    []Outcome    // per call answered, in order
	Header      traces.Header
	Trace       []traces.Event // every event the runtime recorded, in order
	Failure     *Failure       // nil: the run is clean

	explained []verdict // the model's violations the program explained (see outcometrace.go)
}

// Outcome is the driver's answer to one call, without its events.
type Outcome struct {
	Event   int // Trace index of the call's own event; -1 if it recorded none
	Events  int // how many events it recorded
	Refused bool
	Message string
	Kinds   []traces.Kind
	Tensor  *TensorState // layer 5: the answer's tensor, if it gave one
	Grads   []Grad       // layer 5: the answer's gradients, for backward
}

// Failure is what was wrong with a run, at the earliest call.
type Failure struct {
	// What: a violation kind the model reported and the program does not
	// explain ("double-free", ...); or "refusal" (the runtime refused a
	// call the model finds nothing wrong with), "record" (it recorded
	// another call than the one made, or more than frees after it),
	// "zero-sized" (a zero-sized object got an address), "input" (the
	// model cannot take an event); or a TroubleKind: the driver exited,
	// hung or broke the protocol.
	What    string
	Call    int // the call it broke at (Calls index); len(Calls) after the last
	Event   int // the trace event that shows it; -1 if none
	Message string
	Stderr  string // the driver's last stderr

	sig string
	// shown is what the program before shrinking showed, where it was
	// another failure (see firstSeen), kept when the finding is run again.
	shown string
}

// Error reads "premature-free at call 2: ...".
func (f *Failure) Error() string {
	return fmt.Sprintf("%s at call %d: %s", f.What, f.Call, f.Message)
}

// Trouble reports whether the failure is the driver's as a process (a
// crash, a hang, output that is not the protocol), after which the
// driver cannot be used again.
func (f *Failure) Trouble() bool {
	switch TroubleKind(f.What) {
	case TroubleExit, TroubleTimeout, TroubleProtocol, TroubleStart:
		return true
	}
	return false
}

// checker judges a driver's answers as they come, with the model.
type checker struct {
	chk          *model.Checker
	res          *Result
	eventCall    []int         // Trace index -> Calls index
	addrs        []traces.Addr // by handle: the address the driver's runtime gave it
	verdicts     []verdict
	before       traces.State   // the model's state before end, for its leaks
	rule         modelRule      // tests only: a wrong rule of the model, to be caught
	refusedState string         // a refused call: what the model held for it before it (see modelSays)
	attempts     []int          // layer 5: Trace indexes of refused accesses, in order
	scratch      *model.Checker // layer 5: judges a refused access (see probe)
}

type verdict struct {
	traces.Violation
	call int
}

func (c *checker) start(h traces.Header, calls []Call, tcalls []TensorCall) {
	if c.chk == nil {
		c.chk = model.New(h)
	} else {
		c.chk.Reset(h)
	}
	n := len(calls) + len(tcalls)
	c.res = &Result{Calls: calls, TensorCalls: tcalls, Header: h,
		Outcomes: make([]Outcome, 0, n), Trace: make([]traces.Event, 0, n+n/2)}
	c.eventCall = c.eventCall[:0]
	c.attempts = c.attempts[:0]
	c.addrs = c.addrs[:0]
	c.verdicts = c.verdicts[:0]
}

// fail keeps f if it is the run's first failure.
func (c *checker) fail(f *Failure) {
	if c.res.Failure == nil {
		c.res.Failure = f
	}
}

func (c *checker) addr(h int) traces.Addr {
	if h > 0 && h < len(c.addrs) {
		return c.addrs[h]
	}
	return 0
}

// answer takes the driver's answer to call i.
func (c *checker) answer(i int, a *Answer) {
	call := &c.res.Calls[i]
	out := Outcome{Event: -1, Events: len(a.Events), Refused: a.Refused, Message: a.Message}
	if len(a.Kinds) > 0 {
		out.Kinds = slices.Clone(a.Kinds)
	}
	if len(a.Events) == 0 {
		c.res.Outcomes = append(c.res.Outcomes, out)
		c.mismatch(i, "record", "the runtime recorded nothing for %v", call.Op)
		return
	}
	out.Event = len(c.res.Trace)
	c.res.Outcomes = append(c.res.Outcomes, out)
	first := a.Events[0]
	f := callRows[call.Op].fields
	if f&cHandle != 0 {
		for len(c.addrs) <= call.Handle {
			c.addrs = append(c.addrs, 0)
		}
		c.addrs[call.Handle] = first.Addr
		if first.Addr != 0 && call.Size == 0 && (call.Op == traces.OpAlloc || call.Op == traces.OpStructInit) {
			c.mismatch(i, "zero-sized", "%v of a zero-sized object returned %v; a zero-sized object is NULL: the answer is %s, and no object is made", call.Op, first.Addr, zeroSizedAnswer(call))
		}
	}
	if msg, field := c.differs(call, &first); msg != "" {
		c.mismatch(i, "record", "the runtime recorded %s for the call %s: %s", msg, c.describe(call), field)
	}
	for _, ev := range a.Events[1:] {
		if ev.Op != traces.OpFree {
			c.mismatch(i, "record", "the runtime recorded %v after %v; only frees may follow a call's own event", ev.Op, call.Op)
			break
		}
	}
	if call.Op == traces.OpEnd {
		c.chk.StateInto(&c.before)
	}
	if a.Refused {
		c.refusedState = c.modelSays(call, &first) // before the model takes the call
	}
	for k := range a.Events {
		n := len(c.res.Trace)
		c.res.Trace = append(c.res.Trace, a.Events[k])
		c.eventCall = append(c.eventCall, i)
		vs, err := c.chk.Step(&c.res.Trace[n], traces.Pos{Event: n, Line: n + 2})
		if err != nil {
			c.mismatch(i, "input", "the model cannot take the runtime's event %d: %v", n, err)
		}
		c.keep(vs)
	}
	if call.Op == traces.OpEnd {
		c.keep(c.chk.Close())
	}
	// A violation the trace shows says more than the refusal that goes
	// with it: judge first, then hold the refusal to the model's kinds.
	kinds := c.kindsAt(c.res.Outcomes[i].Event)
	c.judge()
	c.checkRefusal(i, kinds)
}

// kindsAt returns the kinds of the violations the model reported at
// event e so far.
func (c *checker) kindsAt(e int) []traces.Kind {
	var kinds []traces.Kind
	for _, v := range c.verdicts {
		if v.Event == e {
			kinds = append(kinds, v.Kind)
		}
	}
	return kinds
}

// differs compares the call's own event with the call made, and says how
// it differs ("" if it does not): the event, and which field differs from
// what the call asked.
func (c *checker) differs(call *Call, ev *traces.Event) (string, string) {
	f := callRows[call.Op].fields
	var field string
	switch {
	case ev.Op != call.Op:
		field = fmt.Sprintf("its op is %v, not %v", ev.Op, call.Op)
	case f&cTarget != 0 && ev.Addr != c.addr(call.Target):
		field = fmt.Sprintf("its addr is %v, where target %d is %v", ev.Addr, call.Target, c.addr(call.Target))
	case f&cName != 0 && ev.Name != call.Name:
		field = fmt.Sprintf("its name is %q, not %q", ev.Name, call.Name)
	case f&cSize != 0 && ev.Size != call.Size:
		field = fmt.Sprintf("its size is %d, not %d", ev.Size, call.Size)
	case f&cSlots != 0 && ev.Slots != call.Slots:
		field = fmt.Sprintf("its slots are %d, not %d", ev.Slots, call.Slots)
	case f&cSlot != 0 && ev.Slot != call.Slot:
		field = fmt.Sprintf("its slot is %d, not %d", ev.Slot, call.Slot)
	case f&cVar != 0 && ev.Var != call.Var:
		field = fmt.Sprintf("its var is %q, not %q", ev.Var, call.Var)
	case f&cFields != 0:
		field = c.fieldsDiffer(call, ev)
	}
	if field == "" {
		return "", ""
	}
	return string(traces.AppendEvent(nil, ev)), field
}

// fieldsDiffer says how a struct_init's fields differ from the call's
// ("" if they do not). A struct at NULL whose fields are all NULL does
// nothing however many it lists (FORMAT.md), so for one such, "fields"
// of any number of NULLs, [] or none at all, are the same answer.
func (c *checker) fieldsDiffer(call *Call, ev *traces.Event) string {
	if ev.Addr == 0 && call.Size == 0 && allNull(ev.Fields) && !slices.ContainsFunc(call.Fields, func(h int) bool { return c.addr(h) != 0 }) {
		return ""
	}
	if len(ev.Fields) != len(call.Fields) {
		return fmt.Sprintf("it has %d fields, not %d", len(ev.Fields), len(call.Fields))
	}
	for k := range ev.Fields {
		if ev.Fields[k] != c.addr(call.Fields[k]) {
			return fmt.Sprintf("its field %d is %v, where handle %d is %v", k, ev.Fields[k], call.Fields[k], c.addr(call.Fields[k]))
		}
	}
	return ""
}

func allNull(as []traces.Addr) bool {
	for _, a := range as {
		if a != 0 {
			return false
		}
	}
	return true
}

// describe writes the call with its handles' addresses, for messages.
func (c *checker) describe(call *Call) string {
	b := call.AppendJSON(nil)
	f := callRows[call.Op].fields
	if f&cTarget != 0 {
		b = fmt.Appendf(b, " (target %d is %v)", call.Target, c.addr(call.Target))
	}
	return string(b)
}

// keep notes the model's violations, at the call whose event they name.
func (c *checker) keep(vs []traces.Violation) {
	for _, v := range vs {
		call := len(c.res.Outcomes) - 1
		if v.Event >= 0 && v.Event < len(c.eventCall) {
			call = c.eventCall[v.Event]
		}
		v.Related = slices.Clone(v.Related)
		c.verdicts = append(c.verdicts, verdict{v, call})
	}
}

// explained decides whether the program, not the runtime, is to blame
// for v: the runtime refused the call v names (with v's kind, if it named
// one), or v is a leak at end of an object the program itself kept alive.
func (c *checker) explained(v verdict) bool {
	out := c.res.Outcomes[v.call]
	if out.Event != v.Event {
		return false // a free the runtime did: never the program's
	}
	if c.res.Calls[v.call].Op == traces.OpEnd && v.Kind == traces.Leak {
		return c.before.Objects[v.Addr] > 0
	}
	return out.Refused && (len(out.Kinds) == 0 || slices.Contains(out.Kinds, v.Kind))
}

// checkRefusal checks that a refused call is one the model finds misuse in.
// kinds are those the model reported at the call's event.
func (c *checker) checkRefusal(i int, kinds []traces.Kind) {
	out := c.res.Outcomes[i]
	if !out.Refused || out.Event < 0 {
		return
	}
	if len(kinds) == 0 {
		c.mismatch(i, "refusal", "the runtime refused %v (%q); the model finds nothing wrong with it: %s", c.res.Calls[i].Op, out.Message, c.refusedState)
		return
	}
	if k, _ := autograd.JudgeRefusal(true, out.Kinds, kinds); k != "" {
		c.mismatch(i, "refusal", "the runtime refused %v as %s (%q); the model reports %v", c.res.Calls[i].Op, k, out.Message, kinds)
	}
}

// judge turns the first unexplained violation into the run's failure.
// The violations the program explains are kept, after the failure too,
// for the suppressions written beside a counterexample's trace.
func (c *checker) judge() {
	for len(c.verdicts) > 0 {
		v := c.verdicts[0]
		if c.explained(v) {
			c.res.explained = append(c.res.explained, v)
		} else if c.res.Failure == nil {
			msg := fmt.Sprintf("%s at event %d: %s", v.Kind, v.Event, v.Message)
			if out := c.res.Outcomes[v.call]; out.Event == v.Event && !out.Refused {
				msg += "; the runtime accepted the call"
			}
			c.fail(&Failure{What: string(v.Kind), Call: v.call, Event: v.Event, Message: msg,
				sig: string(v.Kind) + "@" + c.opAt(v.Event)})
		}
		c.verdicts = c.verdicts[1:]
	}
	c.verdicts = c.verdicts[:0]
}

func (c *checker) opAt(i int) string {
	if i >= 0 && i < len(c.res.Trace) {
		return c.res.Trace[i].Op.String()
	}
	return ""
}

func (c *checker) mismatch(i int, what, format string, args ...any) {
	if c.res.TensorCalls != nil {
		c.mismatchTensor(i, c.res.Outcomes[i].Event, what, format, args...)
		return
	}
	c.fail(&Failure{What: what, Call: i, Event: c.res.Outcomes[i].Event, Message: fmt.Sprintf(format, args...),
		sig: what + "@" + c.res.Calls[i].Op.String()})
}

// trouble makes the driver's failure as a process the run's.
func (c *checker) trouble(call int, t *Trouble) {
	c.fail(&Failure{What: string(t.Kind), Call: call, Event: -1, Message: t.What, Stderr: t.Stderr, sig: string(t.Kind)})
}
