package properties

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/google/go-cmp/cmp"

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
	var model []traces.Kind
	for _, v := range s.res.Verdicts {
		if v.Event == c.Event {
			model = append(model, v.Kind)
		}
	}
	var kinds [4]traces.Kind
	for _, k := range appendKinds(kinds[:0], c.Err) {
		if slices.Contains(model, k) {
			continue
		}
		if len(model) == 0 {
			s.mismatch(index, MismatchRefusal, "the runtime refused %v with %q (%v); the model finds nothing wrong with it", c.Step.Op, k, c.Err)
		} else {
			s.mismatch(index, MismatchRefusal, "the runtime refused %v with %q (%v); the model reports %v", c.Step.Op, k, c.Err, model)
		}
		return
	}
}

// compare checks, after a call, that the runtime's observable state is the
// model's: live objects with their counts, scope records, params.
func (s *session) compare(index int) {
	got, p := s.runtimeState()
	if p != nil {
		s.mismatch(index, MismatchPanic, "the runtime panicked in State: %v", p)
	}
	s.chk.StateInto(&s.state) // nothing keeps the last one: refill it
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
// would say (nil and empty alike), without reflection: it runs after every
// call and at the end of every run, where go-cmp costs eight times the
// rest of a run. go-cmp stays the authority where they differ: it writes
// the diff, and a difference it does not see is none.
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
// trace alone. Then the model closes, and the recorded trace is written,
// read back and replayed: it must give the verdicts the live check gave.
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
	s.apply(flat.Step{Op: traces.OpEnd})
	if got, want := s.rt.State(), s.chk.State(); !s.differ && !sameState(got, want) {
		// Where sameState and go-cmp disagree, go-cmp has the last word.
		if d := cmp.Diff(got, want, stateOpts); d != "" {
			s.mismatch(len(s.res.Calls)-1, MismatchState, "at end the runtime's state differs from the model's (-runtime +model):\n%s", d)
		}
	}
	s.verdicts(s.chk.Close())
	s.roundTrip()
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
func (s *session) roundTrip() {
	r := s.res
	last := len(r.Calls) - 1
	s.trace = encodeTrace(s.trace[:0], r.Header, r.Trace)
	src, err := traces.NewReader(bytes.NewReader(s.trace))
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
