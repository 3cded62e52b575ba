package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tlcheck/tlcheck/traces"
)

// What replay and gate share: the output format, which findings fail the
// run, and the verdict on each file under those flags.

// The output formats of --format.
const (
	formatText  = "text"  // the human report
	formatJSON  = "json"  // the contract's JSON report
	formatSARIF = "sarif" // SARIF 2.1.0, for code-scanning systems
	formatJUnit = "junit" // JUnit XML, for CI test tabs
)

// checkOptions are the flags of replay and gate that decide what fails
// and how the verdict is written.
type checkOptions struct {
	format       string
	json         bool // --json: the alias of --format json
	failOn       kindSet
	requireEnd   bool
	suppressions listFlag
}

// register adds the shared flags to fs.
func (o *checkOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.format, "format", "", "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.Var(&o.failOn, "fail-on", "")
	fs.BoolVar(&o.requireEnd, "require-end", false, "")
	fs.Var(&o.suppressions, "suppressions", "")
}

// resolve settles the format once the flags are parsed: --json is
// --format json, and a contradiction between the two is bad usage.
func (o *checkOptions) resolve() error {
	switch {
	case o.json && o.format != "" && o.format != formatJSON:
		return fmt.Errorf("--json and --format %s contradict each other", o.format)
	case o.json:
		o.format = formatJSON
	case o.format == "":
		o.format = formatText
	}
	switch o.format {
	case formatText, formatJSON, formatSARIF, formatJUnit:
		return nil
	}
	return fmt.Errorf("--format %q: want text, json, sarif or junit", clip(o.format))
}

// policy decides which findings fail a run.
type policy struct {
	failOn     kindSet // empty: every kind fails
	requireEnd bool
	rules      []*rule
}

// fails reports whether a finding of kind k fails the run.
func (p *policy) fails(k traces.Kind) bool {
	return len(p.failOn) == 0 || p.failOn[k]
}

// kindSet is the value of --fail-on: a comma list of violation kinds.
// The flag may be repeated; the kinds add up.
type kindSet map[traces.Kind]bool

func (s *kindSet) String() string {
	if s == nil || len(*s) == 0 {
		return ""
	}
	var names []string
	for _, k := range traces.Kinds() {
		if (*s)[k] {
			names = append(names, string(k))
		}
	}
	return strings.Join(names, ",")
}

func (s *kindSet) Set(v string) error {
	if *s == nil {
		*s = make(kindSet)
	}
	for name := range strings.SplitSeq(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !knownKind(traces.Kind(name)) {
			return fmt.Errorf("unknown kind %q (want a comma list of %s)", clip(name), kindList())
		}
		(*s)[traces.Kind(name)] = true
	}
	if len(*s) == 0 {
		return errors.New("no kind named (want a comma list of " + kindList() + ")")
	}
	return nil
}

// knownKind reports whether k is one of the contract's kinds.
func knownKind(k traces.Kind) bool {
	for _, c := range traces.Kinds() {
		if c == k {
			return true
		}
	}
	return false
}

// kindList names every kind, for messages.
func kindList() string {
	var names []string
	for _, k := range traces.Kinds() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

// listFlag is a flag that may be given several times.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// parseInterleaved parses fs's flags, which may come before, between or
// after the operands; "--" ends the flags. It returns the operands.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard) // the commands print their own usage
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return operands, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(operands, rest...), nil // everything after "--" is an operand
		}
		operands = append(operands, rest[0])
		args = rest[1:]
	}
}

// outcome is the verdict on one file under the run's policy (and, for
// gate, its baseline).
type outcome struct {
	file     string
	err      error // the file could not be read: nothing was checked
	rep      traces.Report
	snapshot bool // a PyTorch memory snapshot, taken mid-run

	// by[i] is the rule that suppresses rep.Violations[i], or nil.
	by []*rule

	// What --max-findings left out of rep.Violations: how many of each
	// kind counted against the run, and how many were suppressed. And
	// the leaks summed by allocation site, biggest first, all of them.
	max                int
	unlisted           map[traces.Kind]int
	unlistedSuppressed int
	sites              []leakSite

	// For gate only.
	gated      bool
	inBaseline bool              // the baseline had an entry for this trace
	known      []bool            // known[i]: rep.Violations[i] is in the baseline
	fixed      []baselineFinding // in the baseline, absent now (Count: how many fewer)
	growth     []growth          // leaked and peak live bytes against the baseline
}

// isNew reports whether violation i counts against the run: not
// suppressed and, under a gate, not in the baseline.
func (o *outcome) isNew(i int) bool {
	return o.by[i] == nil && (!o.gated || !o.known[i])
}

// failing lists the indices of the violations that fail the run.
func (o *outcome) failing(p *policy) []int {
	var idx []int
	for i, v := range o.rep.Violations {
		if o.isNew(i) && p.fails(v.Kind) {
			idx = append(idx, i)
		}
	}
	return idx
}

// failCount counts the violations that fail the run, listed or not.
func (o *outcome) failCount(p *policy) int {
	n := len(o.failing(p))
	for k, c := range o.unlisted {
		if p.fails(k) {
			n += c
		}
	}
	return n
}

// unlistedCount counts the violations --max-findings left out.
func (o *outcome) unlistedCount() int {
	n := o.unlistedSuppressed
	for _, c := range o.unlisted {
		n += c
	}
	return n
}

// suppressedCount counts the suppressed violations.
func (o *outcome) suppressedCount() int {
	n := o.unlistedSuppressed
	for _, r := range o.by {
		if r != nil {
			n++
		}
	}
	return n
}

// incompleteFails reports whether --require-end fails this file.
func (o *outcome) incompleteFails(p *policy) bool {
	return o.err == nil && p.requireEnd && !o.rep.Complete
}

// grew lists the metrics that grew beyond the tolerance.
func (o *outcome) grew() []growth {
	var g []growth
	for _, m := range o.growth {
		if m.exceeded() {
			g = append(g, m)
		}
	}
	return g
}

// code is the file's exit code under p.
func (o *outcome) code(p *policy) int {
	switch {
	case o.err != nil:
		return exitInput
	case o.failCount(p) > 0, o.incompleteFails(p), len(o.grew()) > 0:
		return exitViolation
	}
	return exitClean
}

// failureReasons says, in a few words each, why the file fails; empty when
// it passes.
func (o *outcome) failureReasons(p *policy) []string {
	var why []string
	if o.err != nil {
		return []string{"unreadable input"}
	}
	if n := o.failCount(p); n > 0 {
		noun := "violation"
		if o.gated {
			noun = "new finding"
		}
		why = append(why, plural(n, noun))
	}
	if o.incompleteFails(p) {
		why = append(why, "no end event (--require-end)")
	}
	for _, g := range o.grew() {
		why = append(why, g.name+" grew")
	}
	return why
}

// requireEndMessage is the message for a trace that --require-end fails.
func requireEndMessage(file string) string {
	return file + ": the trace stops without an end event, and --require-end demands one (the run crashed or was cut off; no leak check ran)"
}

// policy loads the suppression files and makes the run's policy.
func (o *checkOptions) policy() (*policy, error) {
	rules, err := loadSuppressions(o.suppressions)
	if err != nil {
		return nil, err
	}
	return &policy{failOn: o.failOn, requireEnd: o.requireEnd, rules: rules}, nil
}

// runInfo says what produced a set of outcomes, for the formats that say
// it.
type runInfo struct {
	command  string   // "replay" or "gate"
	baseline string   // gate: the baseline file
	update   bool     // gate: --update rewrites the baseline from this run
	notes    []string // things worth a line that belong to no one file
}

// writeOutcomes writes every file's verdict in the chosen format. The
// text and JSON formats could stream; SARIF and JUnit are one document
// each, so they need every outcome first.
func writeOutcomes(w io.Writer, outs []outcome, p *policy, format string, info runInfo, colour bool) {
	switch format {
	case formatJSON:
		for i := range outs {
			writeJSONOutcome(w, &outs[i], p, len(outs) > 1 || info.command == "gate")
		}
	case formatSARIF:
		writeSARIF(w, outs, p, info)
	case formatJUnit:
		writeJUnit(w, outs, p, info)
	default:
		for i := range outs {
			writeTextOutcome(w, &outs[i], p, i, len(outs) > 1 || info.command == "gate", colour)
		}
		if info.command == "gate" {
			fmt.Fprintln(w)
			writeGateVerdict(w, outs, p, info, newStyle(colour))
		}
	}
}

// writeTextOutcome writes one file's human report, under a heading where
// the output names files.
func writeTextOutcome(w io.Writer, o *outcome, p *policy, i int, heading, colour bool) {
	if heading {
		if i > 0 {
			fmt.Fprintln(w)
		}
		writeHeading(w, o.file, colour)
		if o.err != nil {
			fmt.Fprintln(w, "not checked: unreadable input")
			return
		}
	}
	if o.err == nil {
		writeOutcome(w, o, p, colour)
	}
}
