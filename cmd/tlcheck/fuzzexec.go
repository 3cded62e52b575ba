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
