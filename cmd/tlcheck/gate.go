package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/mtrace"
)

const gateUsage = `usage: tlcheck gate --baseline FILE [flags] TRACE...

  tlcheck gate --baseline FILE [--update] [--tolerance T]
               [--format text|json|sarif|junit] [--fail-on KINDS]
               [--require-end] [--suppressions FILE]...
               [--from auto|trace|mtrace|torch-snapshot] [--binary PROG] TRACE...

Checks each TRACE as replay does and compares what it finds with the
baseline FILE, which records what a team has accepted. Exits 0 when the
traces show nothing beyond the baseline, 1 when they do, naming each new
finding. Flags may come before or after the traces.

A finding is matched by its fingerprint: its kind, the site of its event
and the site where its object was allocated (never event numbers, lines or
addresses, which move with unrelated edits), counted per trace: a baseline
that accepts one leak at a site fails a run that has two. Findings in the
baseline that are gone are reported as fixed (they never fail the gate);
--update then tightens the baseline. A trace is named in the baseline by its
path as given here, cleaned, with forward slashes.

  --baseline FILE  the baseline (JSON, see README); required
  --update         write the baseline from this run (atomically) and exit
                   0; nothing is written if a trace is unreadable, and FILE
                   is never a trace, a suppression file, or a file that is
                   not a tlcheck baseline
  --tolerance T    how much each trace's leaked bytes and peak live bytes
                   may grow over the baseline: 10% (of the baseline value),
                   4096 or 4KiB, 2MiB, 1GiB (bytes), or 10%,4KiB (whichever
                   allows more); default 0, no growth
  --format F       text (default), json (one object per trace, a line each,
                   with a "file" field), sarif (SARIF 2.1.0) or junit
                   (JUnit XML, one test case per trace)
  --json           the same as --format json
  --fail-on KINDS  a comma list of violation kinds whose new findings fail
                   the gate; new findings of other kinds are still reported;
                   default: every kind
  --require-end    fail a trace that stops without an end event
  --suppressions FILE
                   KIND:PATTERN lines (see replay -h); suppressed findings
                   are listed as such and neither fail nor enter the
                   baseline; may be given several times
  --from FORMAT    auto (the default), trace or mtrace, as for replay
  --binary PROG    turn mtrace callers in PROG into file:line, as for replay

Exit status: 0 nothing beyond the baseline (or --update), 1 a new finding,
a growth beyond the tolerance or (--require-end) a trace without end, 2 bad
usage, an unreadable trace or baseline.
`

// gateOptions are gate's flags.
type gateOptions struct {
	check     checkOptions
	from      string // "auto", "trace" or "mtrace"
	binary    string // the program whose mtrace callers to resolve; "" for none
	baseline  string
	update    bool
	tolerance tolerance
}

func parseGateArgs(args []string) (gateOptions, []string, error) {
	opts := gateOptions{from: "auto"}
	flags := flag.NewFlagSet("gate", flag.ContinueOnError)
	opts.check.register(flags)
	flags.StringVar(&opts.from, "from", "auto", "")
	flags.StringVar(&opts.binary, "binary", "", "")
	flags.StringVar(&opts.baseline, "baseline", "", "")
	flags.BoolVar(&opts.update, "update", false, "")
	flags.Var(&opts.tolerance, "tolerance", "")
	files, err := parseInterleaved(flags, args)
	switch {
	case err != nil:
		return opts, nil, err
	case checkFrom(opts.from) != nil:
		return opts, nil, checkFrom(opts.from)
	case opts.baseline == "":
		return opts, nil, errors.New("--baseline FILE is required")
	case len(files) == 0:
		return opts, nil, errors.New("no traces to gate")
	}
	seen := make(map[string]string)
	for _, f := range files {
		// The baseline has one entry per trace name: a name given twice
		// would count its findings twice, or write a baseline with two.
		if prev, ok := seen[traceKey(f)]; ok {
			return opts, nil, fmt.Errorf("%s and %s name the same trace", clip(prev), clip(f))
		}
		seen[traceKey(f)] = f
	}
	if err := opts.check.resolve(); err != nil {
		return opts, nil, err
	}
	return opts, files, nil
}

func runGate(e *env, args []string) int {
	opts, files, err := parseGateArgs(args)
	if code, ok := badFlags(e, "gate", gateUsage, err); !ok {
		return code
	}
	p, err := opts.check.policy()
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck gate: %v\n", err)
		return exitInput
	}
	base, err := loadGateBaseline(opts, files)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck gate: %v\n", err)
		return exitInput
	}
	var syms *mtrace.Symbols
	if opts.binary != "" {
		if syms, err = mtrace.NewSymbols(opts.binary); err != nil {
			fmt.Fprintf(e.stderr, "tlcheck gate: --binary: %v\n", err)
			return exitInput
		}
	}

	outs := make([]outcome, 0, len(files))
	given := make(map[string]bool)
	worst := exitClean
	for _, name := range files {
		// The gate compares every finding with the baseline: it lists all.
		c := newCollector(name, p, 0)
		rep, from, err := replayFile(e, name, opts.from, syms, c.add)
		if err != nil {
			fmt.Fprintf(e.stderr, "tlcheck: %v\n", err)
		}
		o := c.finish(rep, err)
		o.snapshot = from == fromSnapshot
		key := traceKey(name)
		given[key] = true
		o.compare(base.find(key), opts.tolerance)
		if o.incompleteFails(p) {
			fmt.Fprintf(e.stderr, "tlcheck: %s\n", requireEndMessage(name))
		}
		worst = max(worst, o.code(p))
		outs = append(outs, o)
	}
	info := runInfo{command: "gate", baseline: opts.baseline, update: opts.update}
	for _, t := range base.Traces {
		if !given[t.Trace] {
			info.notes = append(info.notes, fmt.Sprintf("the baseline's trace %s was not given: not compared", t.Trace))
		}
	}

	out := bufio.NewWriterSize(e.stdout, 64<<10)
	writeOutcomes(out, outs, p, opts.check.format, info, e.colour(e.stdout))
	if err := out.Flush(); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck: writing the report: %v\n", err)
		return exitInput
	}

	if !opts.update {
		return worst
	}
	if worst == exitInput {
		fmt.Fprintf(e.stderr, "tlcheck gate: --update: %s not written, since a trace could not be read\n", opts.baseline)
		return exitInput
	}
	nb := newBaseline(outs)
	if err := atomicfile.Replace(opts.baseline, nb.marshal()); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck gate: --update: %v\n", err)
		return exitInput
	}
	n := 0
	for _, t := range nb.Traces {
		for _, f := range t.Findings {
			n += f.Count
		}
	}
	fmt.Fprintf(e.stderr, "tlcheck gate: wrote %s: %s in %s\n", opts.baseline, plural(n, "finding"), plural(len(nb.Traces), "trace"))
	return exitClean
}

// loadGateBaseline reads the baseline. Without --update it must exist.
// With --update a missing one is an empty start, and the file to be
// written must be none of the inputs, nor a file that is not a baseline
// (a typo must not replace someone's trace or notes).
func loadGateBaseline(opts gateOptions, files []string) (*baseline, error) {
	if opts.update {
		for _, in := range append(append([]string(nil), files...), opts.check.suppressions...) {
			if in != "-" && samePath(in, opts.baseline) {
				return nil, fmt.Errorf("--update: %s is one of the inputs; the baseline must be a file of its own", opts.baseline)
			}
		}
	}
	b, err := readBaseline(opts.baseline)
	switch {
	case err == nil:
		return b, nil
	case opts.update && errors.Is(err, fs.ErrNotExist):
		return &baseline{Format: baselineFormat, Version: baselineVersion}, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w (run with --update to create it)", err)
	case opts.update:
		return nil, fmt.Errorf("--update: refusing to replace %v", err)
	}
	return nil, err
}

// writeGateLines ends a trace's human report under a gate: how it stands
// against the baseline.
func writeGateLines(w io.Writer, o *outcome, s style) {
	if o.err != nil {
		return
	}
	if !o.inBaseline {
		fmt.Fprintf(w, "  %sNEW TRACE%s: not in the baseline, so every finding is new and its totals are not compared\n", s.warn, s.reset)
		return
	}
	for _, f := range o.fixed {
		fmt.Fprintf(w, "  %sFIXED%s: %s, %d fewer than the baseline accepts (--update tightens it)\n", s.ok, s.reset, f.fingerprint, f.Count)
	}
	for _, g := range o.growth {
		st, reset := "", ""
		if g.exceeded() {
			st, reset = s.err, s.reset
		}
		fmt.Fprintf(w, "  %s%s%s\n", st, g, reset)
	}
}

// writeGateVerdict is the last line of a gate's human report.
func writeGateVerdict(w io.Writer, outs []outcome, p *policy, info runInfo, s style) {
	for _, n := range info.notes {
		fmt.Fprintf(w, "NOTE: %s\n", n)
	}
	var fails, passes []string
	var newN, grew, noEnd, bad, known, fixed int
	for i := range outs {
		o := &outs[i]
		if o.err != nil {
			bad++
			continue
		}
		newN += len(o.failing(p))
		grew += len(o.grew())
		if o.incompleteFails(p) {
			noEnd++
		}
		for j := range o.rep.Violations {
			if o.by[j] == nil && o.known[j] {
				known++
			}
		}
		for _, f := range o.fixed {
			fixed += f.Count
		}
	}
	if bad > 0 {
		fails = append(fails, plural(bad, "unreadable trace"))
	}
	if newN > 0 {
		fails = append(fails, plural(newN, "new finding"))
	}
	if grew > 0 {
		fails = append(fails, plural(grew, "total")+" grown beyond the tolerance")
	}
	if noEnd > 0 {
		fails = append(fails, plural(noEnd, "trace")+" without end")
	}
	if known > 0 {
		passes = append(passes, fmt.Sprintf("%d known", known))
	}
	if fixed > 0 {
		passes = append(passes, fmt.Sprintf("%d fixed: --update tightens the baseline", fixed))
	}
	aside := ""
	if len(passes) > 0 {
		aside = " (" + strings.Join(passes, ", ") + ")"
	}
	switch {
	case info.update && bad == 0:
		// What would have failed is what the new baseline accepts.
		what := "nothing new"
		if len(fails) > 0 {
			what = strings.Join(fails, ", ")
		}
		fmt.Fprintf(w, "%sGATE: UPDATE%s: %s, accepted into %s%s\n", s.warn, s.reset, what, info.baseline, aside)
		return
	case len(fails) > 0:
		fmt.Fprintf(w, "%sGATE: FAIL%s: %s against %s%s\n", s.err, s.reset, strings.Join(fails, ", "), info.baseline, aside)
		return
	}
	fmt.Fprintf(w, "%sGATE: PASS%s: nothing beyond %s%s\n", s.ok, s.reset, info.baseline, aside)
}

// gateJSON is what a gate adds to a trace's JSON report.
type gateJSON struct {
	Known      []traces.Violation `json:"known"`       // findings the baseline accepts
	Fixed      []baselineFinding  `json:"fixed"`       // in the baseline, gone now
	InBaseline bool               `json:"in_baseline"` // the baseline has this trace
	Growth     []growthJSON       `json:"growth"`      // totals against the baseline
	Verdict    string             `json:"verdict"`     // "pass" or "fail"
	Reasons    []string           `json:"reasons"`     // why it fails; [] when it passes
}

type growthJSON struct {
	Metric   string `json:"metric"` // "leaked_bytes", "peak_live_bytes"
	Baseline uint64 `json:"baseline"`
	Now      uint64 `json:"now"`
	Allowed  uint64 `json:"allowed"`
	Exceeded bool   `json:"exceeded"`
}

func newGateJSON(o *outcome, p *policy, known []traces.Violation) *gateJSON {
	g := &gateJSON{Known: []traces.Violation{}, Fixed: []baselineFinding{}, InBaseline: o.inBaseline,
		Growth: []growthJSON{}, Verdict: "pass", Reasons: o.failureReasons(p)}
	for _, v := range known {
		g.Known = append(g.Known, contractViolation(v))
	}
	g.Fixed = append(g.Fixed, o.fixed...)
	for _, m := range o.growth {
		g.Growth = append(g.Growth, growthJSON{strings.ReplaceAll(m.name, " ", "_"), m.was, m.now, m.allowed, m.exceeded()})
	}
	if len(g.Reasons) > 0 {
		g.Verdict = "fail"
	} else {
		g.Reasons = []string{}
	}
	return g
}
