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
