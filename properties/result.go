package properties

import (
	"fmt"
	"io"
	"strings"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// Result is what one run of a program showed: every event the runtime
// recorded, every call with the runtime's answer, every violation the model
// reported and every other disagreement between the two. The properties
// inspect it.
type Result struct {
	Program    Program
	Header     traces.Header
	Trace      []traces.Event // every event the runtime recorded, in order
	Calls      []Call         // the program's steps, then the teardown, then end
	Verdicts   []Verdict      // every violation the model reported, in order
	Mismatches []Mismatch     // disagreements that are not violations, in order

	eventCall []int // Trace index -> Calls index of the call that recorded it
}

// Call is one call the harness made and what the runtime answered.
type Call struct {
	Step  flat.Step // as made: its refs canonical (see Shrink), so it names what it chose
	Index int       // the step's number: program steps first, then teardown, then end
	Event int       // Trace index of the call's own event; -1 if it recorded none
	Err   error     // what the runtime returned
}

// Verdict is one violation the model reported, placed at the call whose
// event it names.
type Verdict struct {
	traces.Violation
	Call int // Calls index of the call the violation's event belongs to
	// Explained: the program, not the runtime, is at fault: the runtime
	// refused the call with the kind the model reports, or the violation is
	// a leak the program itself left at end.
	Explained bool
}

// Mismatch is a disagreement between runtime and model that no violation
// shows: a different state after a call, a refusal the model does not
// share, a recorded event that is not the call made, a panic.
type Mismatch struct {
	Call int // Calls index
	Kind MismatchKind
	What string
}

// MismatchKind says what disagreed.
type MismatchKind string

const (
	MismatchState     MismatchKind = "state"      // the states differ after a call
	MismatchRefusal   MismatchKind = "refusal"    // the runtime refused a call the model finds no such fault in
	MismatchRecord    MismatchKind = "record"     // the runtime recorded another call than the one made, or more than frees after it
	MismatchZeroSized MismatchKind = "zero-sized" // a zero-sized type got an address, not NULL
	MismatchPanic     MismatchKind = "panic"      // the runtime panicked
	MismatchInput     MismatchKind = "input"      // the model cannot take an event the runtime recorded
	MismatchReplay    MismatchKind = "replay"     // the written trace, read back, replays to other verdicts
)

// Failure is a program run that broke a property.
type Failure struct {
	Property string   // the property that broke first (see Properties)
	Broken   []string // every property the run broke, in the order of Properties
	Call     int      // the call at which it broke (an index into Result.Calls)
	Event    int      // the trace event that shows it; -1 if none does
	Message  string
	Result   *Result

	sig string // see Breach
}

func (f *Failure) Error() string {
	where := fmt.Sprintf("step %d (%v)", f.Call, f.Result.Calls[f.Call].Step)
	if f.Call >= len(f.Result.Program.Steps) {
		where = fmt.Sprintf("teardown %v", f.Result.Calls[f.Call].Step)
	}
	if f.Event >= 0 {
		where += fmt.Sprintf(", event %d", f.Event)
	}
	return f.Property + " broke at " + where + ": " + f.Message
}

// Events returns the length of the failing run's trace.
func (f *Failure) Events() int { return len(f.Result.Trace) }

// WriteTrace writes the failing run's trace, header first, as JSON Lines:
// the file that `tlcheck replay` checks.
func (f *Failure) WriteTrace(w io.Writer) error {
	return writeTrace(w, f.Result.Header, f.Result.Trace)
}

// Unexplained returns the violations of the run's trace that the
// program's own misuse does not explain: what `tlcheck replay` of the
// trace points at beyond the program's refused misuse.
func (r *Result) Unexplained() []traces.Violation {
	var out []traces.Violation
	for _, v := range r.Verdicts {
		if !v.Explained {
			out = append(out, v.Violation)
		}
	}
	return out
}

// Visible reports whether a failure shows in the trace alone: some
// violation is Unexplained. Only such a trace makes `tlcheck replay` exit 1
// for the runtime's fault rather than the program's.
func (r *Result) Visible() bool {
	for _, v := range r.Verdicts {
		if !v.Explained {
			return true
		}
	}
	return false
}

// appendKinds appends to dst the violation kinds a runtime error carries:
// one per *impl.Error in it (a call that trips over several things joins
// them), and "untyped" for an error that is none. Nil carries none. The
// checks that run at every refused call give it an array of their own
// rather than have it make a slice.
func appendKinds(dst []traces.Kind, err error) []traces.Kind {
	switch e := err.(type) {
	case nil:
		return dst
	case *impl.Error:
		return append(dst, e.Kind)
	case interface{ Unwrap() []error }:
		for _, w := range e.Unwrap() {
			dst = appendKinds(dst, w)
		}
		return dst
	case interface{ Unwrap() error }:
		return appendKinds(dst, e.Unwrap())
	}
	return append(dst, "untyped")
}

// source names the runtime configuration in a trace header.
func source(cfg impl.Config) string {
	var b strings.Builder
	b.WriteString("tlcheck impl, ")
	if cfg.Reuse == impl.ReuseFIFO {
		b.WriteString("FIFO reuse")
	} else {
		b.WriteString("LIFO reuse")
	}
	for _, f := range cfg.Faults {
		b.WriteString(", fault ")
		b.WriteString(string(f))
	}
	return b.String()
}
