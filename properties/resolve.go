package properties

import "github.com/tlcheck/tlcheck/impl"

// Resolve runs p against package impl's Runtime without faults, with the
// model, as Run does, and returns what the run recorded: each call as made
// (its refs canonical) with the event it recorded, and the trace, through
// the teardown and end. It judges nothing (no state comparison, no trace
// round trip, no properties), so it costs less than Run: it is how a
// program becomes the fixed calls that a runtime in another process is
// sent (package drive), whose own answers are then judged instead.
func Resolve(p Program) *Result {
	s := newSession(impl.Config{}, p)
	s.resolveOnly = true
	for _, st := range p.Steps {
		s.apply(st)
	}
	r := s.finish()
	s.release()
	return r
}
