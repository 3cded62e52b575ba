package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/properties"
	"github.com/tlcheck/tlcheck/properties/harness"
	"github.com/tlcheck/tlcheck/properties/hunt"
	"github.com/tlcheck/tlcheck/properties/source"
)

const fuzzUsage = `usage: tlcheck fuzz [--fault NAME] [--source] [--time D] [--seed N] [--out DIR]
       tlcheck fuzz --replay FILE.tl [--fault NAME]

Generates programs and runs each against the runtime (package impl), with
the reference model as oracle, until --time passes or a program breaks a
property. A failing program is shrunk to a few steps and its trace is
written to a new file in --out, which 'tlcheck replay FILE' rejects.

  --fault NAME  switch on fault NAME of the catalog ('tlcheck faults'); a
                codegen fault implies --source. The program and source
                engines' faults only: the pool, registry and autograd
                faults are refused ('tlcheck selftest' hunts them)
  --source      generate source programs (package impl/lang) and lower
                them to runtime calls, with the interpreter as a second
                oracle; a failing program's shrunk source is printed and
                saved next to its trace, as FILE.tl
  --replay FILE.tl
                generate nothing: lower the source program in FILE.tl (as
                --source saves one) onto the runtime as it is now, and
                check it as --source checks each program. Its trace shows
                the run of the code that found it; this shows whether the
                code of today still fails. --time, --seed and --out are
                not used
  --time D      how long to search, as a Go duration (default 10s)
  --seed N      the seed of the programs (default: from the clock, printed);
                the same seed generates the same programs
  --out DIR     where to write the trace (default: the current directory);
                an existing file is never overwritten. DIR must exist and
                be writable: it is checked before the search starts

Progress goes to standard error when it is a terminal. The trace is also
printed on standard output, so that it is never lost: if writing it fails
after all, the error goes to standard error and the exit status is still 1.

'tlcheck fuzz --exec CMD' drives a runtime in another process instead:
see below.

Exit status: 0 no failure found, 1 a failure found (trace printed, and
written unless the error says otherwise), 2 bad usage, an unusable --out,
or a --replay FILE that cannot be read or is no well-formed program.

` + fuzzExecUsage

// fuzzOptions are fuzz's flags.
type fuzzOptions struct {
	fault  string
	time   time.Duration
	seed   uint64
	out    string
	source bool
	replay string // a saved source program to check again; "" for none
}

func runFuzz(e *env, args []string) int {
	if wantsExec(args) { // a runtime in another process: package execfuzz
		return runFuzzExec(e, args)
	}
	opts, err := parseFuzzArgs(args)
	if code, ok := badFlags(e, "fuzz", fuzzUsage, err); !ok {
		return code
	}
	var faults []impl.Fault
	if opts.fault != "" {
		info, err := hunt.FuzzFault(opts.fault)
		if err != nil {
			fmt.Fprintf(e.stderr, "tlcheck fuzz: %v", err) // it ends in the list of faults
			return exitInput
		}
		opts.source = opts.source || info.Engine == impl.EngineSource // a codegen fault: only source programs show it
		faults = []impl.Fault{info.Name}
	}
	hopts := harness.Options{Seed: opts.seed, Time: opts.time, Out: opts.out, Fault: opts.fault,
		Stdout: e.stdout, Stderr: e.stderr, Progress: progressTo(e), Save: writeCounterexample}
	if opts.replay != "" {
		return int(harness.Recheck(source.Language(faults), opts.replay, hopts))
	}
	// A failure found after minutes of search must have somewhere to go.
	if err := atomicfile.CheckDir(opts.out); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --out: %v\n", err)
		return exitInput
	}
	if opts.source {
		return int(harness.Fuzz(source.Language(faults), hopts))
	}
	return int(harness.Fuzz(properties.FlatLanguage(faults), hopts))
}

// writeCounterexample writes a failing program's files; a variable so
// that a test can make the write fail after --out was checked.
var writeCounterexample = harness.Save

// progressTo is where a search shows its progress: stderr, when it is a
// terminal; else nowhere.
func progressTo(e *env) io.Writer {
	if e.isTTY == nil || !e.isTTY(e.stderr) {
		return nil
	}
	return e.stderr
}

func parseFuzzArgs(args []string) (fuzzOptions, error) {
	opts := fuzzOptions{}
	fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // fuzz prints its own usage
	fs.StringVar(&opts.fault, "fault", "", "")
	fs.DurationVar(&opts.time, "time", 10*time.Second, "")
	seed := fs.String("seed", "", "")
	fs.StringVar(&opts.out, "out", ".", "")
	fs.BoolVar(&opts.source, "source", false, "")
	fs.StringVar(&opts.replay, "replay", "", "")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if opts.time <= 0 {
		return opts, fmt.Errorf("--time %v: want a positive duration", opts.time)
	}
	s, err := parseSeed(*seed)
	if err != nil {
		return opts, err
	}
	opts.seed = s
	return opts, nil
}

// parseSeed parses --seed; empty means a seed from the clock.
func parseSeed(s string) (uint64, error) {
	if s == "" {
		return uint64(time.Now().UnixNano()), nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("--seed %q: want a non-negative integer", s)
	}
	return n, nil
}
