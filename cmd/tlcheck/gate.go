package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/gate"
	"github.com/tlcheck/tlcheck/internal/exitcode"
	"github.com/tlcheck/tlcheck/report"
)

const gateUsage = `usage: tlcheck gate --baseline FILE [flags] TRACE...

  tlcheck gate --baseline FILE [--update [--prune]] [--tolerance T]
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
                   not a tlcheck baseline. A FILE that is a symbolic link is
                   written through it, FILE keeps its permissions, and a
                   read-only FILE is refused. The baseline's traces not
                   given are kept as they were: a baseline shared by
                   several jobs loses nothing when one of them updates
  --prune          with --update, remove the baseline's traces not given
                   instead of keeping them, naming each on stderr
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
                   default: every kind. leak-suspect searches each trace
                   without an end (a snapshot) for leak suspects: each is
                   a finding (leak-suspect at the site that keeps the
                   blocks) that fails the gate unless the baseline accepts
                   it, and --update accepts it; never part of the default.
                   A run without it keeps the baseline's suspects as they are
  --require-end    fail a trace that stops without an end event
  --suppressions FILE
                   KIND:PATTERN lines (see replay -h); suppressed findings
                   are listed as such and neither fail nor enter the
                   baseline; may be given several times
  --from FORMAT    auto (the default), trace, mtrace or torch-snapshot, as
                   for replay
  --binary PROG    turn mtrace callers in PROG into file:line, as for replay

Exit status: 0 nothing beyond the baseline (or --update), 1 a new finding,
a growth beyond the tolerance or (--require-end) a trace without end, 2 bad
usage, an unreadable trace or baseline.
`

// gateOptions are gate's flags.
type gateOptions struct {
	check  checkOptions
	from   string // "auto", "trace", "mtrace" or "torch-snapshot"
	binary string // the program whose mtrace callers to resolve; "" for none
	gate   gate.Options
}

func parseGateArgs(args []string) (gateOptions, []string, error) {
	opts := gateOptions{from: "auto"}
	flags := flag.NewFlagSet("gate", flag.ContinueOnError)
	opts.check.register(flags)
	flags.StringVar(&opts.from, "from", "auto", "")
	flags.StringVar(&opts.binary, "binary", "", "")
	flags.StringVar(&opts.gate.Baseline, "baseline", "", "")
	flags.BoolVar(&opts.gate.Update, "update", false, "")
	flags.BoolVar(&opts.gate.Prune, "prune", false, "")
	flags.Var(&opts.gate.Tolerance, "tolerance", "")
	files, err := parseInterleaved(flags, args)
	switch {
	case err != nil:
		return opts, nil, err
	case checkFrom(opts.from) != nil:
		return opts, nil, checkFrom(opts.from)
	case opts.gate.Baseline == "":
		return opts, nil, errors.New("--baseline FILE is required")
	case len(files) == 0:
		return opts, nil, errors.New("no traces to gate")
	case opts.gate.Prune && !opts.gate.Update:
		return opts, nil, errors.New("--prune needs --update: it removes traces from the baseline that --update writes")
	}
	if err := gate.Traces(files); err != nil {
		return opts, nil, err
	}
	if err := opts.check.resolve(); err != nil {
		return opts, nil, err
	}
	opts.gate.Inputs = opts.check.suppressions
	return opts, files, nil
}

func runGate(e *env, args []string) int {
	opts, files, err := parseGateArgs(args)
	if code, ok := badFlags(e, "gate", gateUsage, err); !ok {
		return code
	}
	g := opts.gate
	p, err := opts.check.policy()
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck gate: %v\n", err)
		return exitInput
	}
	base, err := gate.Load(g, files)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck gate: %v\n", err)
		return exitInput
	}
	from, ok := inputOptions(e, "gate", opts.from, opts.binary)
	if !ok {
		return exitInput
	}

	outs := make([]check.Outcome, 0, len(files))
	worst := check.Pass
	for _, name := range files {
		// The gate compares every finding with the baseline: it lists all.
		o := checkFile(e, name, from, p, 0)
		o.Compare(base.Find(check.TraceKey(name)), g.Tolerance)
		worst = max(worst, o.Status(p))
		outs = append(outs, o)
	}
	run := report.Run{Command: "gate", Baseline: g.Baseline, Update: g.Update, Colour: e.colour(e.stdout), Notes: gate.Notes(g, base, files)}
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	report.Write(out, opts.check.format, outs, p, run)
	if err := out.Flush(); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck: writing the report: %v\n", err)
		return exitInput
	}

	if !g.Update {
		return exitcode.For(worst)
	}
	if worst == check.Unreadable {
		fmt.Fprintf(e.stderr, "tlcheck gate: --update: %s not written, since a trace could not be read\n", g.Baseline)
		return exitInput
	}
	w, err := gate.Update(g, base, outs)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck gate: %v\n", err)
		return exitInput
	}
	for _, m := range w.Messages(g) {
		fmt.Fprintf(e.stderr, "tlcheck gate: %s\n", m)
	}
	return exitClean
}
