package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/properties/execfuzz"
)

const fuzzExecUsage = `usage: tlcheck fuzz --exec 'CMD ARGS' [--time D] [--seed N] [--out DIR]
                    [--call-timeout D] [--start-timeout D] [--restart]
                    [--replay FILE] [--against 'CMD ARGS'] [--misuse]
                    [--steps N]

Drives a runtime in another process, in any language, over the protocol of
drive/PROTOCOL.md: CMD is its driver, which reads calls on stdin and answers
on stdout. Generates programs of the calls the driver's hello offers, checks
every answer against the reference model as it comes, and shrinks a failure
by running smaller programs on the driver. The counterexample is written to
--out as NAME.calls.jsonl (the calls, which --replay runs again) beside
NAME.trace.jsonl (the trace the runtime wrote, which 'tlcheck replay'
checks). A driver that exits, hangs past --call-timeout or writes what is
not the protocol is a finding too, shown with its last stderr.

  --exec 'CMD ARGS'  the driver's command line, split into words as a shell
                     would (quotes and backslashes; no variables or globs)
  --time D           how long to search (default 10s)
  --seed N           the seed of the programs (default: from the clock)
  --out DIR          where to write the counterexample (default .)
  --call-timeout D   how long to wait for each answer (default 2s)
  --start-timeout D  how long to wait for a driver's hello, after it starts
                     (default 60s: importing PyTorch on a loaded machine
                     takes over 10s)
  --restart          after a driver crash, hang or protocol error, start it
                     again and search on; every finding is written
  --replay FILE      run the calls of FILE (a NAME.calls.jsonl) once instead
                     of searching, and report; with --against, on both
                     drivers, their answers compared. A file beyond the
                     protocol's bounds is refused before a driver starts
  --against 'CMD'    a second driver of layer-5 programs: the same programs
                     run on both, their answers compared call by call (drive.Diff)
  --misuse           programs that misuse the runtime too (a release past the
                     count, a call on a dead object), for a runtime that
                     promises to refuse misuse; the default is what the
                     driver's hello says ("misuse": true), and without it
                     every call is one a correct caller makes. --misuse=false
                     forces correct use
  --steps N          programs of at least N steps (default: 4 to about 700,
                     with deep counts, deep scopes and reused addresses)

Exit status: 0 no failure, 1 a failure found, 2 bad usage, a driver that
cannot be started, or an unreadable --replay file.
`

// runFuzzExec is fuzz --exec: its flags parsed into execfuzz's Options,
// the run is execfuzz's.
func runFuzzExec(e *env, args []string) int {
	opts, err := parseFuzzExecArgs(args)
	if code, ok := badFlags(e, "fuzz", fuzzExecUsage, err); !ok {
		return code
	}
	opts.Stdout, opts.Stderr, opts.Progress = e.stdout, e.stderr, progressTo(e)
	return int(execfuzz.Run(opts))
}

// wantsExec reports whether fuzz's arguments ask for a driver (--exec).
func wantsExec(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "exec" {
			return true
		}
	}
	return false
}

func parseFuzzExecArgs(args []string) (execfuzz.Options, error) {
	var opts execfuzz.Options
	fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&opts.Line, "exec", "", "")
	fs.DurationVar(&opts.Time, "time", 10*time.Second, "")
	seed := fs.String("seed", "", "")
	fs.StringVar(&opts.Out, "out", ".", "")
	fs.DurationVar(&opts.CallTimeout, "call-timeout", 2*time.Second, "")
	fs.DurationVar(&opts.StartTimeout, "start-timeout", defaultStartTimeout, "")
	fs.BoolVar(&opts.Restart, "restart", false, "")
	fs.StringVar(&opts.Replay, "replay", "", "")
	fs.StringVar(&opts.Against, "against", "", "")
	misuse := fs.Bool("misuse", false, "")
	fs.IntVar(&opts.Steps, "steps", 0, "")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	opts.Misuse = misuseFlag(fs, *misuse)
	if opts.Steps < 0 {
		return opts, fmt.Errorf("--steps %d: want a number of steps, 0 or more", opts.Steps)
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if opts.Command, err = execfuzz.SplitWords(opts.Line); err != nil {
		return opts, fmt.Errorf("--exec %q: %v", opts.Line, err)
	}
	if len(opts.Command) == 0 {
		return opts, errors.New("--exec: want the driver's command line")
	}
	if opts.Time <= 0 || opts.CallTimeout <= 0 || opts.StartTimeout <= 0 {
		return opts, errors.New("--time, --call-timeout and --start-timeout want positive durations")
	}
	opts.Seed, err = parseSeed(*seed)
	return opts, err
}

// defaultStartTimeout is --start-timeout's default: the PyTorch driver
// took 10.7s to say hello on a loaded machine, importing torch.
const defaultStartTimeout = 60 * time.Second

// misuseFlag reads --misuse: given, it decides; left out, the driver's
// hello does.
func misuseFlag(fs *flag.FlagSet, on bool) drive.Misuse {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "misuse" })
	switch {
	case !set:
		return drive.MisuseAsHello
	case on:
		return drive.MisuseOn
	}
	return drive.MisuseOff
}
