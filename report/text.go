package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/tlcheck/tlcheck/check/suspect"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/internal/plural"
	"github.com/tlcheck/tlcheck/internal/safetext"
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
	fmt.Fprintf(w, "%s== %s ==%s\n", s.bold, safetext.Escape(name), s.reset)
}

// TextReport writes a report in hand (model.Replay's) for a person,
// every violation listed.
func TextReport(w io.Writer, rep traces.Report, colour bool) {
	o := check.Of("", rep, &check.Policy{})
	writeOutcome(w, &o, &check.Policy{}, colour)
}

// writeOutcome writes one file's verdict for a person: each violation
// that counts with its history (ERROR where it fails the run, WARNING
// where --fail-on lets it pass), one line for each suppressed one, and,
// under a gate, what the baseline accepted, what is fixed and how the
// totals moved.
func writeOutcome(w io.Writer, o *check.Outcome, p *check.Policy, colour bool) {
	s := newStyle(colour)
	for i := range o.Report.Violations {
		if !o.IsNew(i) {
			continue
		}
		v := &o.Report.Violations[i]
		label, st := "ERROR", s.err
		if !p.Fails(v.Kind) {
			label, st = "WARNING", s.warn
		}
		writeViolation(w, v, st, label, s)
		fmt.Fprintln(w)
	}
	if n := o.SuppressedCount(); n > 0 {
		// Each on one line, with what it concerns and where that was
		// allocated: the leaks an end finds are all at one event, with
		// no site, and only those tell them apart.
		for i, r := range o.By {
			if r != nil {
				v := &o.Report.Violations[i]
				made := ""
				if a := check.Allocated(v); a.Event != v.Event {
					made = ", allocated at event " + strconv.Itoa(a.Event) + place(a.Line, a.Site)
				}
				fmt.Fprintf(w, "%sSUPPRESSED: %s at event %d%s%s%s by %s%s\n", s.dim, safe(string(v.Kind)), v.Event, place(v.Line, v.Site), what(v), made, safe(r.String()), s.reset)
			}
		}
		fmt.Fprintln(w)
	}
	writeLeakSites(w, o, s)
	writeSummary(w, o, p, s)
}

// writeLeakSites writes the leaks summed by allocation site, biggest first,
// as LeakSanitizer does, where that says more than the list above: when a
// site leaked more than once, or leaks went unlisted. At most max sites
// are named.
func writeLeakSites(w io.Writer, o *check.Outcome, s style) {
	leaks := 0
	for _, site := range o.LeakSites {
		leaks += site.Objects
	}
	if leaks == len(o.LeakSites) && o.Unlisted[traces.Leak] == 0 {
		return
	}
	fmt.Fprintf(w, "%sLEAKS BY SITE%s (biggest first):\n", s.bold, s.reset)
	for i, site := range o.LeakSites {
		if o.Max > 0 && i == o.Max {
			fmt.Fprintf(w, "  ... and %s\n", plural.Count(len(o.LeakSites)-i, "more site"))
			break
		}
		from := safe(site.Site)
		if from == "" {
			from = "an event with no site"
		}
		first := "event " + strconv.Itoa(site.Event)
		if site.Line > 0 {
			first += ", line " + strconv.Itoa(site.Line)
		}
		fmt.Fprintf(w, "  %s in %s allocated from %s (the first at %s)\n",
			plural.Count(site.Bytes, "byte"), plural.Count(site.Objects, "object"), from, first)
	}
	fmt.Fprintln(w)
}

func writeViolation(w io.Writer, v *traces.Violation, st, label string, s style) {
	fmt.Fprintf(w, "%s%s: %s%s at event %d%s%s\n", st, label, safe(string(v.Kind)), s.reset, v.Event, place(v.Line, v.Site), what(v))
	if v.Message != "" {
		fmt.Fprintf(w, "  %s\n", safe(v.Message))
	}
	for _, r := range v.Related {
		fmt.Fprintf(w, "    %s%s here: event %d%s%s\n", s.dim, safe(r.What), r.Event, place(r.Line, r.Site), s.reset)
	}
}

// what names what v concerns, after its place: ": addr 0x10, object #2".
func what(v *traces.Violation) string {
	var parts []string
	// A broken protocol (a scope_exit with no scope) often names no
	// address; NULL is worth naming everywhere else (a read of NULL).
	if v.Addr != 0 || v.Kind != traces.Misuse {
		parts = append(parts, "addr "+v.Addr.String())
	}
	if v.Object != 0 {
		parts = append(parts, "object #"+strconv.Itoa(v.Object))
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}

// place is the parenthesis after an event number: its line and site, as
// far as they are known.
func place(line int, site string) string {
	var parts []string
	if line > 0 {
		parts = append(parts, "line "+strconv.Itoa(line))
	}
	if site != "" {
		parts = append(parts, safe(site))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// safe is a string from an input (a site, a message that quotes one, a
// name) as the report may show it on a terminal: control characters and
// bytes that are not UTF-8 escaped as strconv.Quote shows them, so that
// a trace cannot clear the screen, set a window title or forge a line.
func safe(s string) string { return safetext.Escape(s) }

func writeSummary(w io.Writer, o *check.Outcome, p *check.Policy, s style) {
	rep := o.Report
	counts := make(map[traces.Kind]int)
	n := 0
	for i, v := range rep.Violations {
		if o.IsNew(i) {
			counts[v.Kind]++
			n++
		}
	}
	for k, c := range o.Unlisted {
		counts[k] += c
		n += c
	}
	var aside []string // what is not counted, and why
	if o.Gated {
		k := len(rep.Violations) + o.UnlistedCount() - n - o.SuppressedCount()
		if p.FailsSuspects() {
			k += len(o.Suspects) - len(o.NewSuspects())
		}
		if k > 0 {
			aside = append(aside, fmt.Sprintf("%d known", k))
		}
	}
	if sus := len(o.NewSuspects()); sus > 0 && p.FailsSuspects() {
		// Leak suspects are findings where the policy fails on them.
		counts[check.LeakSuspect] += sus
		n += sus
	}
	if k := o.SuppressedCount(); k > 0 {
		aside = append(aside, fmt.Sprintf("%d suppressed", k))
	}
	note := ""
	if len(aside) > 0 {
		note = " (" + strings.Join(aside, ", ") + ")"
	}
	noun := "violation"
	switch {
	case o.Gated:
		noun = "new finding"
	case p.FailsSuspects() && len(o.NewSuspects()) > 0:
		noun = "finding" // a leak suspect is no violation
	}
	if n == 0 {
		fmt.Fprintf(w, "%sOK%s: no %ss%s\n", s.ok, s.reset, noun, note)
	} else {
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
		st := s.err
		if o.FailCount(p) == 0 {
			st = s.warn // none of them fails the run
		}
		fmt.Fprintf(w, "%sSUMMARY%s: %s: %s%s\n", st, s.reset, plural.Count(n, noun), strings.Join(byKind, ", "), note)
	}
	if k := o.UnlistedCount(); k > 0 {
		fmt.Fprintf(w, "  %s not listed above (--max-findings %d; 0 lists all)\n", plural.Count(k, "more violation"), o.Max)
	}
	fmt.Fprintf(w, "  events %d, objects %d, peak live bytes %d\n", rep.Events, rep.Objects, rep.PeakLiveBytes)
	if d := o.Device; d != nil {
		// A snapshot's two measures: the peak live bytes above count
		// what was reserved, the tensors hold what was allocated.
		fmt.Fprintf(w, "  device memory: peak allocated %s / peak reserved %s; at the end allocated %s / reserved %s\n",
			humanBytes(d.PeakAllocated), humanBytes(d.PeakReserved), humanBytes(d.Allocated), humanBytes(d.Reserved))
	}
	switch {
	case !rep.Complete:
		// Effects can find a leak before the trace stops (a free missed
		// after a call): then the report must not also say that no leak
		// check ran, only that the end's did not.
		what := "so no leak check ran"
		if len(o.LeakSites) > 0 || slices.ContainsFunc(rep.Violations, func(v traces.Violation) bool { return v.Kind == traces.Leak }) {
			what = "so what it still held was not checked for leaks (the leaks above are frees it missed on the way)"
		}
		st, fails := s.warn, ""
		if o.IncompleteFails(p) {
			st, fails = s.err, "; --require-end fails it"
		}
		if o.Snapshot {
			// A snapshot is taken mid-run: what it holds is in use.
			fmt.Fprintf(w, "  %sINCOMPLETE%s: a memory snapshot is taken mid-run: what it still holds is live, not leaked, so no leak check ran%s\n", st, s.reset, fails)
			break
		}
		fmt.Fprintf(w, "  %sINCOMPLETE%s: the trace stops without an end event, %s%s\n", st, s.reset, what, fails)
	default:
		fmt.Fprintf(w, "  leaked %s, still reachable %s\n", totals(rep.Leaked), totals(rep.StillReachable))
	}
	writeSuspectLines(w, o, p, s)
	if o.Gated {
		writeGateLines(w, o, s)
	}
}

// writeSuspectLines lists a trace's leak suspects where the policy
// searched for them (a snapshot's under replay, any trace's under
// --fail-on leak-suspect): a line each, new or known to the baseline,
// and a line where there is none.
func writeSuspectLines(w io.Writer, o *check.Outcome, p *check.Policy, s style) {
	if !o.SuspectsSearched {
		return
	}
	if len(o.Suspects) == 0 {
		fmt.Fprintf(w, "  %sNO LEAK SUSPECT%s: nothing grows steadily every iteration (tlcheck suspects says more)\n", s.ok, s.reset)
		return
	}
	for i := range o.Suspects {
		sp := &o.Suspects[i]
		st, label := s.err, "LEAK SUSPECT"
		if o.Gated && o.SuspectKnown[i] {
			st, label = s.warn, "KNOWN LEAK SUSPECT"
		} else if !p.FailsSuspects() {
			st = s.warn
		}
		fmt.Fprintf(w, "  %s%s%s: %s keeps %s (%s) every iteration, in %d of %d complete iterations: %s confidence\n",
			st, label, s.reset, safe(sp.Site), plural.Count(sp.BlocksPerIteration, "block"), bytesText(sp.BytesPerIteration),
			sp.IterationsSeen, sp.Complete, sp.Confidence)
	}
}

func totals(t traces.Totals) string {
	return fmt.Sprintf("%s (%s)", plural.Count(t.Objects, "object"), plural.Count(t.Bytes, "byte"))
}

// JSONReport writes rep as the contract's JSON object, on one line.
func JSONReport(w io.Writer, rep traces.Report) {
	writeJSON(w, contractShape(rep), false)
}

// writeJSON writes v as JSON and a newline, without HTML escaping (sites
// hold < and >), indented or on one line, with the control characters
// encoding/json leaves raw escaped (safetext.JSON). The report's values
// always marshal; w's errors surface where the caller flushes.
func writeJSON(w io.Writer, v any, indent bool) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	enc.Encode(v)
	w.Write(safetext.JSON(buf.Bytes()))
}

// fileReport is the JSON of one file's verdict: the contract's report,
// with a "file" field where the output names files (several files, gate),
// and what the flags add: the suppressed findings and, under a gate, the
// known ones and the comparison with the baseline. A file that could not
// be read has its error instead of a report.
type fileReport struct {
	File string `json:"file,omitempty"`
	*traces.Report
	Suppressed []suppressedJSON `json:"suppressed,omitempty"`
	// With --max-findings: how many violations of each kind count against
	// the run but are not listed. And the leaks by allocation site,
	// biggest first, every one of them.
	Unlisted  map[traces.Kind]int `json:"unlisted,omitempty"`
	LeakSites []check.LeakSite    `json:"leak_sites,omitempty"`
	// A snapshot's device memory, named as PyTorch names it: allocated
	// (pool blocks) and reserved (segments and mapped ranges).
	Device *deviceJSON `json:"device_memory,omitempty"`
	// Leak suspects, where the policy searched for them (--fail-on
	// leak-suspect); under a gate each says whether the baseline has it.
	LeakSuspects []suspectJSON `json:"leak_suspects,omitempty"`
	*gateJSON
	Error string `json:"error,omitempty"`
}

// suspectJSON is a leak suspect of a gated or replayed trace.
type suspectJSON struct {
	suspect.Suspect
	Known bool `json:"known"` // the baseline accepts it
}

// deviceJSON is check.Outcome.Device, each measure named.
type deviceJSON struct {
	PeakAllocated uint64 `json:"peak_allocated_bytes"`
	EndAllocated  uint64 `json:"allocated_bytes_at_end"`
	PeakReserved  uint64 `json:"peak_reserved_bytes"`
	EndReserved   uint64 `json:"reserved_bytes_at_end"`
}

// suppressedJSON is a suppressed finding and the rule that suppressed it.
type suppressedJSON struct {
	traces.Violation
	SuppressedBy string `json:"suppressed_by"` // "FILE:LINE"
	Rule         string `json:"rule"`          // "KIND:PATTERN"
}

// writeJSONOutcome writes o as one line of JSON. Its "violations" are the
// findings that count (not suppressed, not known to the baseline).
func writeJSONOutcome(w io.Writer, o *check.Outcome, p *check.Policy, withFile bool) {
	line := fileReport{}
	if withFile || o.Err != nil {
		line.File = o.File
	}
	if o.Err != nil {
		line.Error = o.Err.Error()
	} else {
		rep := o.Report
		rep.Violations = nil
		var known []traces.Violation
		for i, v := range o.Report.Violations {
			switch {
			case o.By[i] != nil:
				line.Suppressed = append(line.Suppressed, suppressedJSON{contractViolation(v),
					fmt.Sprintf("%s:%d", o.By[i].File, o.By[i].Line), string(o.By[i].Kind) + ":" + o.By[i].Pattern})
			case o.IsNew(i):
				rep.Violations = append(rep.Violations, v)
			default:
				known = append(known, v)
			}
		}
		rep = contractShape(rep)
		line.Report = &rep
		line.Unlisted, line.LeakSites = o.Unlisted, o.LeakSites
		if d := o.Device; d != nil {
			line.Device = &deviceJSON{d.PeakAllocated, d.Allocated, d.PeakReserved, d.Reserved}
		}
		for i := range o.Suspects {
			line.LeakSuspects = append(line.LeakSuspects, suspectJSON{o.Suspects[i], o.Gated && o.SuspectKnown[i]})
		}
		if o.Gated {
			line.gateJSON = newGateJSON(o, p, known)
		}
	}
	writeJSON(w, line, false)
}

// contractShape returns rep with empty lists as [] rather than null, as
// the contract writes them.
func contractShape(rep traces.Report) traces.Report {
	if rep.Violations == nil {
		rep.Violations = []traces.Violation{}
	}
	for i := range rep.Violations {
		rep.Violations[i] = contractViolation(rep.Violations[i])
	}
	return rep
}

// contractViolation returns v with an empty history as [] rather than null.
func contractViolation(v traces.Violation) traces.Violation {
	if v.Related == nil {
		v.Related = []traces.Related{}
	}
	return v
}

// humanBytes writes n in bytes and, from 1 KiB, in the largest binary
// unit below it: "1811939328 bytes (1.7 GiB)".
func humanBytes(n uint64) string {
	s := strconv.FormatUint(n, 10) + " bytes"
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	if n < 1<<10 {
		return s
	}
	i, v := 0, float64(n)/(1<<10)
	for v >= 1<<10 && i < len(units)-1 {
		v /= 1 << 10
		i++
	}
	return s + " (" + strconv.FormatFloat(v, 'f', 1, 64) + " " + units[i] + ")"
}
