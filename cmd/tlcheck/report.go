package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/traces"
)

// The human report, in the spirit of an AddressSanitizer report: each
// violation as a header line naming the event, the message, and the
// earlier events that explain it; then a summary and the totals.
//
//	ERROR: double-free at event 7 (line 9, a.tl:3): addr 0x1000, object #2
//	  release of object #2, which died at event 5
//	    freed here: event 5 (line 7, a.tl:3)
//	    allocated here: event 2 (line 4, a.tl:2)
//
//	SUMMARY: 1 violation: 1 double-free
//	  events 9, objects 2, peak live bytes 128
//	  leaked 0 objects (0 bytes), still reachable 1 object (64 bytes)

// style holds the escape sequences of a report: empty without colour.
type style struct {
	err, ok, warn, dim, bold, reset string
}

func newStyle(colour bool) style {
	if !colour {
		return style{}
	}
	return style{err: "\x1b[1;31m", ok: "\x1b[1;32m", warn: "\x1b[1;33m", dim: "\x1b[2m", bold: "\x1b[1m", reset: "\x1b[0m"}
}

// writeHeading names the file whose report follows, when there are several.
func writeHeading(w io.Writer, name string, colour bool) {
	s := newStyle(colour)
	fmt.Fprintf(w, "%s== %s ==%s\n", s.bold, name, s.reset)
}

// writeHuman writes rep for a person.
func writeHuman(w io.Writer, rep traces.Report, colour bool) {
	s := newStyle(colour)
	for i := range rep.Violations {
		writeViolation(w, &rep.Violations[i], s)
		fmt.Fprintln(w)
	}
	writeSummary(w, rep, s)
}

func writeViolation(w io.Writer, v *traces.Violation, s style) {
	fmt.Fprintf(w, "%sERROR: %s%s at event %d%s", s.err, v.Kind, s.reset, v.Event, place(v.Line, v.Site))
	var what []string
	// A broken protocol (a scope_exit with no scope) often names no
	// address; NULL is worth naming everywhere else (a read of NULL).
	if v.Addr != 0 || v.Kind != traces.Misuse {
		what = append(what, "addr "+v.Addr.String())
	}
	if v.Object != 0 {
		what = append(what, "object #"+strconv.Itoa(v.Object))
	}
	if len(what) > 0 {
		fmt.Fprintf(w, ": %s", strings.Join(what, ", "))
	}
	fmt.Fprintln(w)
	if v.Message != "" {
		fmt.Fprintf(w, "  %s\n", v.Message)
	}
	for _, r := range v.Related {
		fmt.Fprintf(w, "    %s%s here: event %d%s%s\n", s.dim, r.What, r.Event, place(r.Line, r.Site), s.reset)
	}
}

// place is the parenthesis after an event number: its line and site, as
// far as they are known.
func place(line int, site string) string {
	var parts []string
	if line > 0 {
		parts = append(parts, "line "+strconv.Itoa(line))
	}
	if site != "" {
		parts = append(parts, site)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func writeSummary(w io.Writer, rep traces.Report, s style) {
	if n := len(rep.Violations); n == 0 {
		fmt.Fprintf(w, "%sOK%s: no violations\n", s.ok, s.reset)
	} else {
		counts := make(map[traces.Kind]int)
		for _, v := range rep.Violations {
			counts[v.Kind]++
		}
		var byKind []string
		for _, k := range traces.Kinds() {
			if c := counts[k]; c > 0 {
				byKind = append(byKind, fmt.Sprintf("%d %s", c, k))
				delete(counts, k)
			}
		}
		for k, c := range counts { // kinds beyond the contract's, if any
			byKind = append(byKind, fmt.Sprintf("%d %s", c, k))
		}
		fmt.Fprintf(w, "%sSUMMARY%s: %s: %s\n", s.err, s.reset, plural(n, "violation"), strings.Join(byKind, ", "))
	}
	fmt.Fprintf(w, "  events %d, objects %d, peak live bytes %d\n", rep.Events, rep.Objects, rep.PeakLiveBytes)
	if !rep.Complete {
		// Effects can find a leak before the trace stops (a free missed
		// after a call): then the report must not also say that no leak
		// check ran, only that the end's did not.
		what := "so no leak check ran"
		if slices.ContainsFunc(rep.Violations, func(v traces.Violation) bool { return v.Kind == traces.Leak }) {
			what = "so what it still held was not checked for leaks (the leaks above are frees it missed on the way)"
		}
		fmt.Fprintf(w, "  %sINCOMPLETE%s: the trace stops without an end event, %s\n", s.warn, s.reset, what)
		return
	}
	fmt.Fprintf(w, "  leaked %s, still reachable %s\n", totals(rep.Leaked), totals(rep.StillReachable))
}

func totals(t traces.Totals) string {
	return fmt.Sprintf("%s (%s)", plural(t.Objects, "object"), plural(t.Bytes, "byte"))
}

// plural writes "n nouns". It takes any integer, so that byte totals, which
// are uint64, are written whole: a leak of 2^64-1 bytes is not "-1 bytes".
func plural[N ~int | ~uint64](n N, noun string) string {
	var s string
	if n < 0 {
		s = strconv.FormatInt(int64(n), 10)
	} else {
		s = strconv.FormatUint(uint64(n), 10)
	}
	if n == 1 {
		return s + " " + noun
	}
	return s + " " + noun + "s"
}

// writeJSON writes rep as the contract's JSON object, on one line.
func writeJSON(w io.Writer, rep traces.Report) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(contractShape(rep)) // a Report always marshals; w's errors surface at Flush
}

// fileReport is one line of --json output for several files: the report of
// one file, or the error that kept it from being checked.
type fileReport struct {
	File string `json:"file"`
	*traces.Report
	Error string `json:"error,omitempty"`
}

func writeJSONLine(w io.Writer, name string, rep traces.Report, err error) {
	line := fileReport{File: name}
	if err != nil {
		line.Error = err.Error()
	} else {
		rep = contractShape(rep)
		line.Report = &rep
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(line)
}

// contractShape returns rep with empty lists as [] rather than null, as
// the contract writes them.
func contractShape(rep traces.Report) traces.Report {
	if rep.Violations == nil {
		rep.Violations = []traces.Violation{}
	}
	for i := range rep.Violations {
		if rep.Violations[i].Related == nil {
			rep.Violations[i].Related = []traces.Related{}
		}
	}
	return rep
}
