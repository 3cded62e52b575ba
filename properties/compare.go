package properties

import (
	"fmt"
	"io"
	"slices"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// checkRefusal checks that each kind a refused call carries is one the
// model reports for that call.
func (s *session) checkRefusal(index int) {
	c := s.res.Calls[index]
	if c.Err == nil || c.Event < 0 {
		return
	}
	var kinds4 [4]traces.Kind
	reported := kinds4[:0] // on the stack: a mismatch describes a copy
	for _, v := range s.res.Verdicts {
		if v.Event == c.Event {
			reported = append(reported, v.Kind)
		}
	}
	var kinds [4]traces.Kind
	k, _ := model.JudgeRefusal(true, appendKinds(kinds[:0], c.Err), reported)
	switch {
	case k == "":
	case len(reported) == 0:
		s.mismatch(index, MismatchRefusal, "the runtime refused %v with %q (%v); the model finds nothing wrong with it", c.Step.Op, k, c.Err)
	default:
		s.mismatch(index, MismatchRefusal, "the runtime refused %v with %q (%v); the model reports %v", c.Step.Op, k, c.Err, slices.Clone(reported))
	}
}

// compare checks, after a call, that the runtime's observable state is the
// model's: live objects with their counts, scope records, params.
func (s *session) compare(index int) {
	s.chk.StateInto(&s.state) // nothing keeps the last one: refill it
	if s.runtimeMatches() {
		s.differ = false
		return
	}
	// They differ, or the runtime panicked: the runtime's state, made,
	// says how.
	got, p := s.runtimeState()
	if p != nil {
		s.mismatch(index, MismatchPanic, "the runtime panicked in State: %v", p)
	}
	switch {
	case sameState(got, s.state):
		s.differ = false
	case s.differ:
		// Still apart since the last call: the first diff said how, and a
		// diff per call after it would cost most of the run.
		s.mismatch(index, MismatchState, "after %v the states still differ", s.res.Calls[index].Step)
	default:
		s.differ = true
		s.mismatch(index, MismatchState, "after %v the runtime's state differs from the model's (-runtime +model):\n%s",
			s.res.Calls[index].Step, cmp.Diff(got, s.state, stateOpts))
	}
}

// sameState reports whether a and b are equal as cmp.Equal with stateOpts
// would say (nil and empty alike), without reflection: the comparison
// impl.Runtime.Matches makes without the runtime's state made, and the one
// compare makes when Matches finds a difference. go-cmp writes the diff.
// TestSameStateSeesEveryField fails, naming the field, when traces.State
// grows a field that sameState does not compare, and
// TestSameStateAgreesWithCmp holds sameState to cmp.Equal on states the
// model and runtimes reach and on their near misses.
func sameState(a, b traces.State) bool {
	if len(a.Objects) != len(b.Objects) || len(a.Scopes) != len(b.Scopes) || len(a.Params) != len(b.Params) {
		return false
	}
	for k, v := range a.Objects {
		if w, ok := b.Objects[k]; !ok || w != v {
			return false
		}
	}
	for i := range a.Scopes {
		if !slices.Equal(a.Scopes[i], b.Scopes[i]) {
			return false
		}
	}
	for k, v := range a.Params {
		if w, ok := b.Params[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func (s *session) mismatch(index int, kind MismatchKind, format string, args ...any) {
	s.res.Mismatches = append(s.res.Mismatches, Mismatch{Call: index, Kind: kind, What: fmt.Sprintf(format, args...)})
}

// finish ends the run as a well-behaved caller ends one: it exits the
// frames the program left open, then the scopes left open, and releases the params left held (in name order), then calls
// end. The teardown turns any difference in counts or records into a free
// that one side does and the other does not, so that a failure shows in the
// trace alone. Then the model closes; and where the run failed, the
// recorded trace, the one the failure hands its user, is written, read
// back and replayed: it must give the verdicts the live check gave.
//
// A run that passed writes no trace. The round trip checks tlcheck's own
// writer, reader and replay, not the runtime: it cannot make a failing
// run pass or a passing one fail at an earlier call, and it cost a
// passing run, Passes' in a fuzz body, more than a third of its time.
// TestEveryRunRoundTrips holds it for the runs that pass, programs under
// every program fault and none, and FuzzReplay (fuzz/) the reader and the
// replay on any bytes.
func (s *session) finish() *Result {
	if s.done {
		return s.res
	}
	s.done = true
	for range s.frames.Depth() {
		s.apply(flat.Step{Op: traces.OpFnExit})
	}
	for range len(s.state.Scopes) {
		s.apply(flat.Step{Op: traces.OpScopeExit})
	}
	for _, n := range paramsInOrder(s.state.Params) {
		s.apply(flat.Step{Op: traces.OpParamRelease, Name: n})
	}
	// end's call compared the states at end, as every call's does.
	s.apply(flat.Step{Op: traces.OpEnd})
	s.verdicts(s.chk.Close())
	if b, _ := check(s.res); b != nil {
		s.roundTrip()
	}
	return s.res
}

// sortedNames are the names generated programs use, sorted.
var sortedNames = slices.Sorted(slices.Values(flat.Names()))

// paramsInOrder returns the names in params in sorted order. It walks
// sortedNames, the names generated programs use, before it sorts any
// other: sorting a map's keys takes branches that depend on the map's
// random order, which Go's fuzzer reads as new coverage of one input.
func paramsInOrder(params map[string]traces.Addr) []string {
	out := make([]string, 0, len(params))
	for _, n := range sortedNames {
		if _, ok := params[n]; ok {
			out = append(out, n)
		}
	}
	if len(out) == len(params) {
		return out
	}
	var others []string // a parsed program's own names
	for n := range params {
		if !slices.Contains(sortedNames, n) {
			others = append(others, n)
		}
	}
	slices.Sort(others)
	out = append(out, others...)
	slices.Sort(out)
	return out
}

// roundTrip writes the trace, reads it back and replays it through the
// model: what `tlcheck replay` would do with the file.
//
// Where the trace reads back as the header and events the live check
// stepped, and the live verdicts are in event order, the replay is known
// without running it: Replay is Reset with the header, Step on each event
// and Close, as the live check was, and its orderer (model/order.go) only
// sorts, stably by event, violations that are then in event order already.
// So the model replays only a trace that did not read back as it was
// written or a run whose verdicts came out of order (a missed free found
// late); TestEveryRunRoundTrips holds the shortcut to the replay.
func (s *session) roundTrip() {
	r := s.res
	last := len(r.Calls) - 1
	s.trace = encodeTrace(s.trace[:0], r.Header, r.Trace)
	if s.readsBack() && inEventOrder(r.Verdicts) {
		return
	}
	s.replay(last)
}

// readsBack reports whether s.trace reads back as the run's header and
// events, each equal to the one the live check stepped (sameEvent), and
// nothing more. A trace that does not read back is replay's to report.
func (s *session) readsBack() bool {
	r := s.res
	s.reader.Reset(s.trace)
	src, err := traces.NewReader(&s.reader)
	if err != nil || src.Header() != r.Header {
		return false
	}
	for i := range r.Trace {
		if src.Next(&s.readEv) != nil || !sameEvent(&s.readEv, &r.Trace[i]) {
			return false
		}
	}
	return src.Next(&s.readEv) == io.EOF
}

// sameEvent reports whether a and b are the same event, every field
// (TestSameEventSeesEveryField fails, naming the field, when
// traces.Event grows one it does not compare).
func sameEvent(a, b *traces.Event) bool {
	return a.Op == b.Op && a.HasCount == b.HasCount && a.Addr == b.Addr && a.NewAddr == b.NewAddr &&
		a.Size == b.Size && a.Site == b.Site && a.HasSize == b.HasSize && a.Kind == b.Kind &&
		slices.Equal(a.Fields, b.Fields) && a.Name == b.Name && a.Slots == b.Slots && a.Slot == b.Slot &&
		a.Var == b.Var && a.Space == b.Space && a.T == b.T && a.Thread == b.Thread &&
		a.Stream == b.Stream && a.Count == b.Count
}

// inEventOrder reports whether vs name their events in order: the order
// Replay's orderer puts them in.
func inEventOrder(vs []Verdict) bool {
	for i := 1; i < len(vs); i++ {
		if vs[i].Event < vs[i-1].Event {
			return false
		}
	}
	return true
}

// replay reads s.trace back and replays it through the model, and notes a
// mismatch at call last where the replay's verdicts are not the live
// check's.
func (s *session) replay(last int) {
	r := s.res
	s.reader.Reset(s.trace)
	src, err := traces.NewReader(&s.reader)
	if err != nil {
		s.mismatch(last, MismatchReplay, "reading the written trace back: %v", err)
		return
	}
	got := s.replayed[:0]
	// The session's own Checker, done with the live check, replays: the
	// round trip then depends on nothing but this run.
	_, err = s.chk.ReplayFunc(&lender{Reader: src}, func(v traces.Violation, _ uint64) {
		got = append(got, kindAt{v.Kind, v.Event})
	})
	s.replayed = got[:0]
	if err != nil {
		s.mismatch(last, MismatchReplay, "replaying the written trace: %v", err)
		return
	}
	if !slices.EqualFunc(got, r.Verdicts, func(g kindAt, v Verdict) bool { return g == kindAt{v.Kind, v.Event} }) {
		want := make([]kindAt, len(r.Verdicts))
		for i, v := range r.Verdicts {
			want[i] = kindAt{v.Kind, v.Event}
		}
		s.mismatch(last, MismatchReplay, "replaying the written trace reports %v; checking it live reported %v", got, want)
	}
}

// kindAt is a violation as the round trip compares it: its kind and event.
type kindAt struct {
	kind  traces.Kind
	event int
}

func (k kindAt) String() string { return fmt.Sprintf("%s@%d", k.kind, k.event) }
