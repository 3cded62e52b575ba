package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/properties/hunt"
)

type selftestOptions struct {
	json   bool
	report string
	hunt   hunt.Options
}

func runSelftest(e *env, args []string) int {
	opts, err := parseSelftestArgs(args)
	if code, ok := badFlags(e, "selftest", selftestUsage, err); !ok {
		return code
	}
	// Refuse a report path that is not ours before the hunt, not after.
	if err := hunt.CheckReport(opts.report); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck selftest: --report: %v\n", err)
		return exitInput
	}
	rep := hunt.All(opts.hunt)
	if opts.json {
		err = rep.WriteJSON(e.stdout)
	} else {
		err = rep.WriteTable(e.stdout)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck selftest: %v\n", err)
		return exitInput
	}
	if opts.report != "" {
		if err := atomicfile.Replace(opts.report, rep.Markdown()); err != nil {
			fmt.Fprintf(e.stderr, "tlcheck selftest: writing the report: %v\n", err)
			return exitInput
		}
		if !opts.json {
			fmt.Fprintf(e.stdout, "wrote %s\n", opts.report)
		}
	}
	if rep.Control.Failed {
		fmt.Fprintf(e.stderr, "tlcheck selftest: the correct runtime failed %s: run tlcheck fuzz --seed %d to see it\n",
			rep.Control.Property, opts.hunt.Seed)
	}
	if !rep.OK() {
		return exitViolation
	}
	return exitClean
}

func parseSelftestArgs(args []string) (selftestOptions, error) {
	opts := selftestOptions{}
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&opts.json, "json", false, "")
	fs.StringVar(&opts.report, "report", "", "")
	fs.DurationVar(&opts.hunt.Budget, "time", 10*time.Second, "")
	fs.Uint64Var(&opts.hunt.Seed, "seed", 1, "")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if opts.hunt.Budget <= 0 {
		return opts, fmt.Errorf("--time %v: want a positive duration", opts.hunt.Budget)
	}
	return opts, nil
}
