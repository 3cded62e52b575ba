package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/properties/hunt"
)

const selftestUsage = `usage: tlcheck selftest [--json] [--report PATH] [--time D] [--seed N]

Hunts every fault of the runtime's catalog ('tlcheck faults'): with the
fault switched on alone, generated programs run against the runtime, with
the reference model as oracle, until one fails or --time passes; the
failing program is shrunk. A runtime fault is hunted with programs of
runtime calls (the slot planner's and the arena's with source programs
too, whose catch is noted); a codegen fault with source programs (package impl/lang),
lowered to runtime calls, with the interpreter as a second oracle, and its
shrunk source program goes into the report. The GPU pool's faults
(impl/gpu) are hunted by the pool property, whose programs drive the
allocators. The registry's faults (impl/registry) are hunted by concurrent
histories checked for linearizability against a sequential model
(porcupine), until one is not linearizable. The autograd faults
(impl/autograd) are hunted by generated autograd programs on an engine
built over the runtime, with the model, a shadow of the version counters
and ClearGrads as oracles, and their shrunk programs go into the report.
Prints, per fault, its engine, whether it was caught, the seconds to a
counterexample and its size in the engine's unit (trace events, source
statements, pool or history calls, autograd steps). Then the correct
runtime (with flat and source programs), the correct allocators, the
correct registry and the correct autograd engine run as controls for the
same time (at most 1s each): they must not fail.

  --json         print {"faults":[{"name":..,"engine":..,"caught":..,"seconds":..,
                 "size":..,"unit":..,"counterexample":..,"events":..}]}: the
                 counterexample is the shrunk trace (JSON Lines), source
                 program, pool program, history or autograd program
  --report PATH  also write the results as Markdown to PATH (atomically); a
                 file that is there must be such a report, which it replaces
                 (go run ./reports/gen -only detection writes
                 reports/detection.md)
  --time D       the budget per fault, as a Go duration (default 10s)
  --seed N       the seed of the programs (default 1)

Exit status: 0 every fault caught and the control clean, 1 a fault escaped
or the control failed, 2 bad usage or the report could not be written.
`

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
