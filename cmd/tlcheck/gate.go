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
