package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/internal/exitcode"
	"io/fs"

	"github.com/tlcheck/tlcheck/internal/plural"
	"github.com/tlcheck/tlcheck/internal/safetext"
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
	check     checkOptions
	from      string // "auto", "trace" or "mtrace"
	binary    string // the program whose mtrace callers to resolve; "" for none
	baseline  string
	update    bool
	prune     bool // with update: drop the baseline's traces not given
	tolerance check.Tolerance
}

func parseGateArgs(args []string) (gateOptions, []string, error) {
	opts := gateOptions{from: "auto"}
	flags := flag.NewFlagSet("gate", flag.ContinueOnError)
	opts.check.register(flags)
	flags.StringVar(&opts.from, "from", "auto", "")
	flags.StringVar(&opts.binary, "binary", "", "")
	flags.StringVar(&opts.baseline, "baseline", "", "")
	flags.BoolVar(&opts.update, "update", false, "")
	flags.BoolVar(&opts.prune, "prune", false, "")
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
	case opts.prune && !opts.update:
		return opts, nil, errors.New("--prune needs --update: it removes traces from the baseline that --update writes")
	}
	seen := make(map[string]string)
	for _, f := range files {
		// The baseline has one entry per trace name: a name given twice
		// would count its findings twice, or write a baseline with two.
		if prev, ok := seen[check.TraceKey(f)]; ok {
			return opts, nil, fmt.Errorf("%s and %s name the same trace", safetext.Clip(prev), safetext.Clip(f))
		}
		seen[check.TraceKey(f)] = f
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
	from, ok := inputOptions(e, "gate", opts.from, opts.binary)
	if !ok {
		return exitInput
	}

	outs := make([]check.Outcome, 0, len(files))
	given := make(map[string]bool)
	worst := check.Pass
	for _, name := range files {
		// The gate compares every finding with the baseline: it lists all.
		o := checkFile(e, name, from, p, 0)
		key := check.TraceKey(name)
		given[key] = true
		o.Compare(base.Find(key), opts.tolerance)
		worst = max(worst, o.Status(p))
		outs = append(outs, o)
	}
	run := report.Run{Command: "gate", Baseline: opts.baseline, Update: opts.update, Colour: e.colour(e.stdout)}
	for _, t := range base.Traces {
		if !given[t.Trace] {
			run.Notes = append(run.Notes, fmt.Sprintf("the baseline's trace %s was not given: %s", t.Trace, notGivenFate(opts)))
		}
	}

	out := bufio.NewWriterSize(e.stdout, 64<<10)
	report.Write(out, opts.check.format, outs, p, run)
	if err := out.Flush(); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck: writing the report: %v\n", err)
		return exitInput
	}

	if !opts.update {
		return exitcode.For(worst)
	}
	if worst == check.Unreadable {
		fmt.Fprintf(e.stderr, "tlcheck gate: --update: %s not written, since a trace could not be read\n", opts.baseline)
		return exitInput
	}
	nb, notRun := base.Update(outs, opts.prune)
	if err := atomicfile.Replace(opts.baseline, nb.Marshal()); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck gate: --update: %v\n", err)
		return exitInput
	}
	n := 0
	for i := range nb.Traces {
		n += nb.Traces[i].Accepted()
	}
	aside := ""
	if len(notRun) > 0 && !opts.prune {
		aside = fmt.Sprintf(" (%d not given, kept as it was)", len(notRun))
	}
	fmt.Fprintf(e.stderr, "tlcheck gate: wrote %s: %s in %s%s\n", opts.baseline, plural.Count(n, "finding"), plural.Count(len(nb.Traces), "trace"), aside)
	if opts.prune {
		for i := range notRun {
			fmt.Fprintf(e.stderr, "tlcheck gate: removed %s from %s (not given; --prune), with its %s\n",
				safetext.Clip(notRun[i].Trace), opts.baseline, plural.Count(notRun[i].Accepted(), "accepted finding"))
		}
	}
	return exitClean
}

// notGivenFate is what happens to a baseline's trace the run was not
// given: a plain gate does not compare it, an update keeps it as it was,
// and an update with --prune removes it.
func notGivenFate(opts gateOptions) string {
	switch {
	case opts.prune:
		return "removed (--prune)"
	case opts.update:
		return "kept as it was"
	}
	return "not compared"
}

// loadGateBaseline reads the baseline. Without --update it must exist.
// With --update a missing one is an empty start, and the file to be
// written must be none of the inputs, nor a file that is not a baseline
// (a typo must not replace someone's trace or notes).
func loadGateBaseline(opts gateOptions, files []string) (*check.Baseline, error) {
	if opts.update {
		if err := atomicfile.CheckReplace(opts.baseline); err != nil {
			return nil, fmt.Errorf("--update: %w", err)
		}
		for _, in := range append(append([]string(nil), files...), opts.check.suppressions...) {
			if in != "-" && atomicfile.SameFile(in, opts.baseline) {
				return nil, fmt.Errorf("--update: %s is one of the inputs; the baseline must be a file of its own", opts.baseline)
			}
		}
	}
	b, err := check.ReadBaseline(opts.baseline)
	switch {
	case err == nil:
		return b, nil
	case opts.update && errors.Is(err, fs.ErrNotExist):
		return check.EmptyBaseline(), nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w (run with --update to create it)", err)
	case opts.update:
		return nil, fmt.Errorf("--update: refusing to replace %v", err)
	}
	return nil, err
}
