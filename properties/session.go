package properties

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// session drives one runtime and one model side by side: each call goes to
// the runtime, the events the runtime records for it go to the model, and
// after every call the two are compared. Run, the rapid test and the gopter
// test all drive their programs through it.
type session struct {
	rt  *impl.Runtime
	chk *model.Checker
	res *Result
	// recFrom is where the events the call in progress recorded start in
	// res.Trace: the runtime's recorder appends them there, the one copy.
	recFrom int
	addrs   []traces.Addr // addresses the runtime handed out, least recently first
	choose  flat.Chooser  // resolve's lists, kept from call to call
	state   traces.State  // the model's state after the last call
	differ  bool          // the runtime's state differed from it after the last call
	done    bool

	frames  flat.Frames // the frames the program entered, as it knows them (frames.go)
	planned impl.Plan   // the plan of the fn_enter being made

	// The call in progress, kept here rather than on apply's stack: the
	// hooks take pointers to them, which would move them to the heap on
	// every call.
	cur  flat.Step
	want traces.Event
	got  traces.State // the runtime's state after the call, refilled each time

	trace    []byte // the round trip's written trace (encodeTrace)
	reader   bytes.Reader
	readEv   traces.Event // the round trip's event read back
	replayed []kindAt     // the round trip's verdicts, kept for the next run's

	// last is the result of the session's last run, which no caller saw
	// (Passes): the next run's result takes its arrays.
	last *Result
}

// stateOpts compares States with nil and empty maps and slices equal.
var stateOpts = cmp.Options{cmpopts.EquateEmpty()}

// newSession returns a session for p against a runtime configured by
// cfg: one that an earlier Run released, started afresh, or a new one.
func newSession(cfg impl.Config, p flat.Program) *session {
	s, ok := sessions.Get().(*session)
	if !ok {
		return freshSession(cfg, p)
	}
	h := header(cfg)
	s.chk.Reset(h)
	*s = session{chk: s.chk, state: s.state, got: s.got, // refilled: see compare
		addrs: s.addrs[:0], choose: s.choose, frames: s.frames.Empty(), trace: keptTrace(s.trace),
		replayed: s.replayed[:0]}
	s.start(cfg, p, h)
	return s
}

// freshSession returns a new session for p against a runtime configured
// by cfg, made of nothing a session had before.
func freshSession(cfg impl.Config, p flat.Program) *session {
	h := header(cfg)
	s := &session{chk: model.New(h)}
	s.start(cfg, p, h)
	return s
}

// header is the header of the trace of a run against cfg.
func header(cfg impl.Config) traces.Header {
	return traces.Header{Format: traces.FormatName, Version: traces.Version, Effects: true, Source: source(cfg)}
}

// start readies s, its Checker new or Reset for h, to run p against a new
// runtime configured by cfg.
func (s *session) start(cfg impl.Config, p flat.Program, h traces.Header) {
	// Room for the steps, the teardown and end, and for a free to every
	// other call or so (generated programs record about 1.25 events a
	// call), so that a run seldom grows its slices.
	calls := len(p.Steps) + 8
	if r := s.last; r != nil {
		// Every element is written before it is read. The arrays grow by
		// append alone, as a new result's do: a Grow here would branch on
		// what earlier runs left (see Passes).
		s.last = nil
		*r = Result{Program: p, Header: h, Calls: r.Calls[:0], Trace: r.Trace[:0], eventCall: r.eventCall[:0],
			Verdicts: r.Verdicts[:0], Mismatches: r.Mismatches[:0]}
		s.res = r
	} else {
		s.res = &Result{Program: p, Header: h}
		s.res.Calls = make([]Call, 0, calls)
		s.res.Trace = make([]traces.Event, 0, calls+calls/2)
		s.res.eventCall = make([]int, 0, calls+calls/2)
	}
	user := cfg.Record
	cfg.Record = func(ev traces.Event) {
		ev.Fields = slices.Clone(ev.Fields) // the runtime may reuse its slice
		s.res.Trace = append(s.res.Trace, ev)
		if user != nil {
			user(ev)
		}
	}
	s.rt = impl.New(cfg)
	s.chk.StateInto(&s.state)
}

// sessions holds sessions that are over (release), for newSession to
// start afresh with the memory they grew: the model Checker, Reset (see
// model.Checker.Reset), the states and the stacks. Search and the
// property tests run thousands of short programs a second, and a new
// Checker's tables cost more than checking one of them. (Passes, the fuzz
// body, does without: see there.)
var sessions sync.Pool

// release hands s, finished, to the next newSession. Its result stays the
// caller's: nothing in it is the session's.
func (s *session) release() {
	s.rt, s.res = nil, nil
	sessions.Put(s)
}

// apply makes the call st, with its operands resolved against what the
// model holds alive now.
func (s *session) apply(st flat.Step) {
	index := len(s.res.Calls)
	c, inv := flat.CallOf(st.Op), invocationOf(st.Op)
	if c == nil || inv == nil {
		panic(fmt.Sprintf("properties: step with op %v, which no row of calls makes", st.Op))
	}
	if st.Fields != nil {
		st.Fields = slices.Clone(st.Fields) // resolve makes the refs canonical in place
	}
	s.cur, s.want = st, traces.Event{Op: st.Op}
	cur, want := &s.cur, &s.want
	for _, o := range c.Operands() {
		resolvers[o](s, st.Op, cur, want)
	}
	if inv.prepare != nil {
		inv.prepare(s, cur, want)
	}
	s.recFrom = len(s.res.Trace)
	err, panicked := s.invoke(inv, cur, want)
	if inv.learn != nil {
		inv.learn(s, cur, want, err)
	}
	st = *cur
	s.res.Calls = append(s.res.Calls, Call{Step: st, Index: index, Event: -1, Err: err})
	if panicked != nil {
		s.mismatch(index, MismatchPanic, "the runtime panicked: %v", panicked)
	}
	if c.Creates() && want.Addr != 0 {
		s.handedOut(want.Addr)
		if st.Size == 0 {
			s.mismatch(index, MismatchZeroSized, "%v of a zero-sized type returned %v; a zero-sized type is NULL", st.Op, want.Addr)
		}
	}
	s.checkRecorded(index, c, *want)
	s.feed(index)
	s.checkRefusal(index)
	s.compare(index)
}

// invoke makes the call by inv and returns what the runtime answered, or what it
// panicked with: a runtime must answer misuse with an error, and a panic
// is a finding, not a crash of the harness.
func (s *session) invoke(inv *invocation, st *flat.Step, ev *traces.Event) (err error, panicked any) {
	defer func() { panicked = recover() }()
	return inv.invoke(s.rt, st, ev), nil
}

// runtimeMatches reports whether the runtime's state is s.state, the
// model's (impl.Runtime.Matches), false if the runtime panicked.
func (s *session) runtimeMatches() (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return s.rt.Matches(&s.state)
}

// runtimeState refills s.got with the runtime's state and returns it, or
// what the runtime panicked with.
func (s *session) runtimeState() (st traces.State, panicked any) {
	defer func() { panicked = recover() }()
	s.rt.StateInto(&s.got)
	return s.got, nil
}

// resolve turns a Ref for a call of op into an address, by the rule
// every harness shares (flat.Choose): among the addresses the runtime
// handed out, least recently first, those whose object the model holds
// alive (Live) or holding no object now (Dead). It makes *r canonical.
func (s *session) resolve(op traces.Op, r *flat.Ref) traces.Addr {
	return s.choose.Choose(op, r, s.addrs, &s.state)
}

// handedOut moves a to the end of addrs: the newest object lives there.
func (s *session) handedOut(a traces.Addr) {
	if i := slices.Index(s.addrs, a); i >= 0 {
		s.addrs = slices.Delete(s.addrs, i, i+1)
	}
	s.addrs = append(s.addrs, a)
}

// checkRecorded checks that the runtime recorded the call it was asked to
// make, then only frees. A size is checked where the call takes one (a
// NULL alloc may record it or not).
//
// It runs at every call, and describing an event (traces.Event.String)
// makes the compiler keep the event on the heap: so the events are read
// where they lie, and only a mismatch copies want to describe it (an event
// moved to the heap at every call was a third of a fuzzed program's
// allocations).
func (s *session) checkRecorded(index int, c *flat.Call, want traces.Event) {
	rec := s.res.Trace[s.recFrom:]
	if len(rec) == 0 {
		s.mismatch(index, MismatchRecord, "the runtime recorded nothing for %v", want.Op)
		return
	}
	got := &rec[0]
	if got.Op != want.Op || got.Addr != want.Addr || got.Name != want.Name ||
		c.Sized() && (got.Size != want.Size || got.HasSize != want.HasSize) ||
		!slices.Equal(got.Fields, want.Fields) ||
		got.Slots != want.Slots || got.Slot != want.Slot || got.Var != want.Var {
		w := want
		s.mismatch(index, MismatchRecord, "the runtime recorded %s for the call %s", got.String(), w.String())
	}
	for i := 1; i < len(rec); i++ {
		if ev := &rec[i]; ev.Op != traces.OpFree {
			s.mismatch(index, MismatchRecord, "the runtime recorded %s after %v; only frees may follow a call", ev.String(), want.Op)
		}
	}
}

// feed hands the events the call recorded to the model and keeps its
// verdicts.
func (s *session) feed(index int) {
	r := s.res
	if s.recFrom < len(r.Trace) {
		r.Calls[index].Event = s.recFrom
	}
	for range len(r.Trace) - s.recFrom {
		r.eventCall = append(r.eventCall, index)
	}
	for n := s.recFrom; n < len(r.Trace); n++ {
		ev := &r.Trace[n] // the model keeps no pointer to it past Step
		vs, err := s.chk.Step(ev, traces.Pos{Event: n, Line: n + 2})
		if err != nil {
			s.mismatch(index, MismatchInput, "the model cannot take the runtime's event %d (%s): %v", n, ev.String(), err)
		}
		s.verdicts(vs)
	}
}

// verdicts keeps the model's violations, placing each at the call whose
// event it names and deciding whether the program explains it.
func (s *session) verdicts(vs []traces.Violation) {
	r := s.res
	for _, v := range vs {
		call := len(r.Calls) - 1
		if v.Event >= 0 && v.Event < len(r.eventCall) {
			call = r.eventCall[v.Event]
		}
		v.Related = slices.Clone(v.Related)
		r.Verdicts = append(r.Verdicts, Verdict{Violation: v, Call: call, Explained: s.explained(v)})
	}
}

// explained decides whether the program, not the runtime, is to blame for
// v. Two cases: the runtime refused the call that v names, with v's kind
// (a refused misuse); and a leak the model finds at end of an object still
// alive, which is the program's (it acquired without releasing, or moved a
// value out of every scope). The runtime's books were compared equal to the
// model's after every call, so an object the runtime kept alive wrongly
// has broken a property before end.
func (s *session) explained(v traces.Violation) bool {
	r := s.res
	if v.Event < 0 || v.Event >= len(r.Trace) {
		return false
	}
	ev := r.Trace[v.Event]
	c := r.Calls[r.eventCall[v.Event]]
	if c.Event != v.Event { // a free the runtime did: never the program's
		return false
	}
	if ev.Op == traces.OpEnd && v.Kind == traces.Leak {
		// s.state is still the state before end: an object the model held
		// alive there is one the program never let go of; an object whose
		// count had reached 0 but that was never freed is the runtime's.
		return s.state.Objects[v.Addr] > 0
	}
	if c.Err == nil {
		return false
	}
	var kinds [4]traces.Kind
	return slices.Contains(appendKinds(kinds[:0], c.Err), v.Kind)
}
