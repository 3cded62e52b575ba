// Package model is the reference model: an executable statement of what a
// correct memory runtime must do, checked event by event against a trace.
//
// (Helper: replace this comment with the package contract.)
package model

import "github.com/tlcheck/tlcheck/traces"

// Checker checks one trace. It keeps objects by identity, not by address,
// so address reuse cannot fool it, and it streams: its memory grows with
// what is alive, never with the number of events.
type Checker struct {
	header traces.Header
}

// New returns a Checker for a trace with header h.
func New(h traces.Header) *Checker {
	return &Checker{header: h}
}

// Step checks one event at pos. It returns the violations the event
// revealed, in order (the slice is valid until the next call), or an error
// (*traces.Error) when the event cannot be taken as input at all, such as a
// free of a managed object in a trace without effects.
func (c *Checker) Step(ev *traces.Event, pos traces.Pos) ([]traces.Violation, error) {
	panic("unimplemented")
}

// Close ends the trace, whether or not it reached end: checks still pending
// (frees due after the last call, with effects) run here. It returns the
// violations they found.
func (c *Checker) Close() []traces.Violation {
	panic("unimplemented")
}

// Report returns the totals so far: events, objects made, peak live bytes,
// leaked and still-reachable objects (filled at end) and whether end was
// reached. Its Violations field is left nil; Replay collects them.
func (c *Checker) Report() traces.Report {
	panic("unimplemented")
}

// State returns the observable layer-2 state (live objects and counts,
// scope records of live objects, params).
func (c *Checker) State() traces.State {
	panic("unimplemented")
}

// Replay checks every event of src and returns the full report. Its error
// is non-nil only when the input could not be read (exit 2 material).
func Replay(src traces.Source) (traces.Report, error) {
	panic("unimplemented")
}
