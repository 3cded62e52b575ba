package properties

import (
	"sync"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/harness"
	"github.com/tlcheck/tlcheck/traces"
)

// Run runs p against a runtime configured by cfg, with the model as
// oracle, and returns what it showed and the failure, if a property broke
// (the breach at the earliest call). cfg.Record, if set, still receives
// every event.
//
// Each step goes to the runtime; the events it records go to the model;
// then the properties' inputs are gathered: the model's violations, whether
// the runtime refused the call with the kind the model reports, whether it
// recorded the call it was asked to make, and whether its state equals the
// model's (impl.Runtime.Matches; where not, go-cmp writes the diff).
// After the last step Run tears down (exits the open scopes, releases the
// params) and calls end; a run that failed then replays its written trace
// (see finish). It then releases its session, Checker and all, for the
// next Run to reuse (see newSession).
func Run(p Program, cfg impl.Config) (*Result, *Failure) {
	s := newSession(cfg, p)
	for _, st := range p.Steps {
		s.apply(st)
	}
	r := s.finish()
	s.release()
	b, broken := check(r)
	if b == nil {
		return r, nil
	}
	return r, &Failure{Property: b.Property, Broken: broken, Call: b.Call, Event: b.Event,
		Message: b.Message, Result: r, sig: b.sig}
}

// Passes reports whether p passes every property against cfg: whether Run
// would return no failure. A fuzz body calls it first, and Run only for a
// failure.
//
// Every branch a run of Passes takes depends on p alone, not on the runs
// before it: Go's fuzzer counts the branches a run takes as its coverage.
// Sessions from Run's pool made them depend on the runs before too (a
// slice grown only if an earlier run had not, a pool the garbage collector
// had emptied, states and stacks kept at an earlier run's size), so that
// the same input showed new coverage one time in several, and inputs
// found "interesting" that way could not be minimised (every smaller
// candidate lost the coverage), stalling the fuzzer for up to
// -fuzzminimizetime each. So Passes keeps its own sessions, in a free list
// the collector does not empty, and starts each run with new states but
// for their maps, cleared (a map grows and clears in the runtime's own
// code, which go test -fuzz does not instrument); what else it keeps (the
// Checker, Reset; the arrays of the last result) grows by append alone,
// which takes no branch of the instrumented code.
// TestCoverageIsDeterministic (fuzz/) holds this.
func Passes(p Program, cfg impl.Config) bool {
	s := kept.get(cfg, p)
	for _, st := range p.Steps {
		s.apply(st)
	}
	b, _ := check(s.finish())
	kept.put(s)
	return b == nil
}

// keptSessions is Passes' sessions: a free list the garbage collector
// does not empty, of at most 8 (a fuzzing worker runs one program at a
// time; parallel callers each take their own).
type keptSessions struct {
	mu   sync.Mutex
	free []*session
}

var kept keptSessions

func (k *keptSessions) get(cfg impl.Config, p Program) *session {
	k.mu.Lock()
	n := len(k.free)
	if n == 0 {
		k.mu.Unlock()
		return freshSession(cfg, p)
	}
	s := k.free[n-1]
	k.free = k.free[:n-1]
	k.mu.Unlock()
	h := header(cfg)
	s.chk.Reset(h)
	*s = session{chk: s.chk, addrs: s.addrs[:0], choose: s.choose, frames: s.frames.Empty(), trace: keptTrace(s.trace),
		replayed: s.replayed[:0], last: s.last,
		state: traces.State{Objects: s.state.Objects, Params: s.state.Params}} // refilled: see compare
	s.start(cfg, p, h)
	return s
}

func (k *keptSessions) put(s *session) {
	s.rt, s.res, s.last = nil, nil, s.res
	k.mu.Lock()
	if len(k.free) < 8 {
		k.free = append(k.free, s)
	}
	k.mu.Unlock()
}

// visibleGrace is how many more programs Search runs, after a failure
// that does not show in its trace, to find one that does. Some faults
// show in the trace only in one program of several hundred (a runtime
// that refuses a correct program shows only in its answer), and layer 3's
// calls thin out each layer's share of a program.
const visibleGrace = 1000

// Search runs programs generated from seed against cfg until one fails or
// more(programs run so far) returns false. It returns the failing program
// and its failure (nil if none failed) and how many programs ran. The same
// seed gives the same programs.
//
// It prefers a failure that shows in its trace (Result.Visible): after one
// that does not, it runs up to visibleGrace more programs for one that
// does, and otherwise returns the first. It is the harness's Search over
// the flat language (FlatLanguage).
func Search(cfg impl.Config, seed uint64, more func(programs int) bool) (Program, *Failure, int) {
	p, f, n := harness.Search(flatLanguage(cfg), seed, more)
	if f == nil {
		return p, nil, n
	}
	return p, f.Detail.(*Failure), n
}
