package report

import (
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/internal/safetext"
)

// Format is a report format.
type Format string

// The formats.
const (
	Text  Format = "text"  // the human report
	JSON  Format = "json"  // the contract's JSON report
	SARIF Format = "sarif" // SARIF 2.1.0, for code-scanning systems
	JUnit Format = "junit" // JUnit XML, for CI test tabs
)

// ParseFormat returns the format named s.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Text, JSON, SARIF, JUnit:
		return f, nil
	}
	return "", fmt.Errorf("%q: want text, json, sarif or junit", safetext.Clip(s))
}

// Streams reports whether the format writes each outcome on its own (so a
// command may write each as soon as it has it); SARIF and JUnit are one
// document each, and need every outcome first.
func (f Format) Streams() bool { return f == Text || f == JSON }

// Run says what produced a set of outcomes, for the formats that say it.
type Run struct {
	Command  string   // "replay" or "gate"
	Baseline string   // gate: the baseline file
	Update   bool     // gate: --update rewrites the baseline from this run
	Notes    []string // things worth a line that belong to no one file
	Colour   bool     // text: ANSI colour (only for a terminal)
}

// gate reports whether the run compared with a baseline.
func (r Run) gate() bool { return r.Command == "gate" }

// Write writes every outcome in format f: for text and JSON as File would
// one by one (named, where there are several or a gate), then for a gate
// its verdict.
func Write(w io.Writer, f Format, outs []check.Outcome, p *check.Policy, run Run) {
	switch f {
	case SARIF:
		writeSARIF(w, outs, p, run)
	case JUnit:
		writeJUnit(w, outs, p, run)
	default:
		named := len(outs) > 1 || run.gate()
		for i := range outs {
			File(w, f, &outs[i], p, i, named, run.Colour)
		}
		if f == Text && run.gate() {
			fmt.Fprintln(w)
			writeGateVerdict(w, outs, p, run, newStyle(run.Colour))
		}
	}
}

// File writes the outcome of the i-th file in format f, which streams (text
// or JSON): named says that the output names its files (there are several,
// or a gate), as a heading or a "file" field.
func File(w io.Writer, f Format, o *check.Outcome, p *check.Policy, i int, named, colour bool) {
	if f == JSON {
		writeJSONOutcome(w, o, p, named)
		return
	}
	if named {
		if i > 0 {
			fmt.Fprintln(w)
		}
		writeHeading(w, o.File, colour)
		if o.Err != nil {
			fmt.Fprintln(w, "not checked: unreadable input")
			return
		}
	}
	if o.Err == nil {
		writeOutcome(w, o, p, colour)
	}
}
