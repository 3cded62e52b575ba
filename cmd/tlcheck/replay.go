package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/internal/cpuprofile"
	"github.com/tlcheck/tlcheck/internal/exitcode"
	"github.com/tlcheck/tlcheck/report"
)

// replayOptions are replay's flags.
type replayOptions struct {
	check      checkOptions
	from       string // "auto", "trace" or "mtrace"
	cpuprofile string // where to write a CPU profile; "" for none
	binary     string // the program whose callers to resolve; "" for none

	// maxFindings bounds the violations a report lists (0: all); unset,
	// it is defaultMaxFindings for the human report and 0 for the rest.
	maxFindings int
}

// defaultMaxFindings is how many violations the human report lists by
// default, as Valgrind stops listing errors after a thousand: no one reads
// further, and a trace that leaks millions of objects must not cost a
// report per object. The machine formats list every violation unless
// --max-findings says otherwise, as the contract's JSON report does.
const defaultMaxFindings = 1000

func runReplay(e *env, args []string) (code int) {
	opts, files, err := parseReplayArgs(args)
	if code, ok := badFlags(e, "replay", replayUsage, err); !ok {
		return code
	}
	p, err := opts.check.policy()
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck replay: %v\n", err)
		return exitInput
	}
	p.ListSuspects = true // a snapshot's suspects cost little in the same replay

	from, ok := inputOptions(e, "replay", opts.from, opts.binary)
	if !ok {
		return exitInput
	}

	if opts.cpuprofile != "" {
		stop, err := cpuprofile.Start(opts.cpuprofile, files)
		if err != nil {
			fmt.Fprintf(e.stderr, "tlcheck: --cpuprofile: %v\n", err)
			return exitInput
		}
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintf(e.stderr, "tlcheck: --cpuprofile: %v\n", err)
				code = max(code, exitInput)
			}
		}()
	}

	out := bufio.NewWriterSize(e.stdout, 64<<10)
	defer out.Flush()
	format := opts.check.format
	colour := format == report.Text && e.colour(e.stdout)
	worst := check.Pass
	var whole []check.Outcome // for the formats that are one document
	for i, name := range files {
		o := checkFile(e, name, from, p, opts.maxFindings)
		worst = max(worst, o.Status(p))
		if !format.Streams() {
			whole = append(whole, o)
			continue
		}
		report.File(out, format, &o, p, i, len(files) > 1, colour)
		if ferr := out.Flush(); ferr != nil {
			fmt.Fprintf(e.stderr, "tlcheck: writing the report: %v\n", ferr)
			return exitInput
		}
	}
	if whole != nil {
		report.Write(out, format, whole, p, report.Run{Command: "replay"})
		if ferr := out.Flush(); ferr != nil {
			fmt.Fprintf(e.stderr, "tlcheck: writing the report: %v\n", ferr)
			return exitInput
		}
	}
	return exitcode.For(worst)
}

// parseReplayArgs parses replay's flags, which may come before, between or
// after the files; "--" ends the flags.
func parseReplayArgs(args []string) (replayOptions, []string, error) {
	opts := replayOptions{from: "auto"}
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	opts.check.register(fs)
	fs.StringVar(&opts.from, "from", "auto", "")
	fs.StringVar(&opts.cpuprofile, "cpuprofile", "", "")
	fs.StringVar(&opts.binary, "binary", "", "")
	fs.IntVar(&opts.maxFindings, "max-findings", 0, "")
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return opts, nil, err
	}
	if err := checkFrom(opts.from); err != nil {
		return opts, nil, err
	}
	if len(files) == 0 {
		return opts, nil, errors.New("no files to replay")
	}
	if err := opts.check.resolve(); err != nil {
		return opts, nil, err
	}
	set := false // whether --max-findings was given: its default depends on the format
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "max-findings" })
	switch {
	case opts.maxFindings < 0:
		return opts, nil, fmt.Errorf("--max-findings %d: want a count, or 0 for no limit", opts.maxFindings)
	case !set && opts.check.format == report.Text:
		opts.maxFindings = defaultMaxFindings
	}
	return opts, files, nil
}
