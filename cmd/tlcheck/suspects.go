package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/check/suspect"
	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/report"
)

func runSuspects(e *env, args []string) int {
	var opts suspect.Options
	var format, from, failOn string
	var asJSON bool
	fs := flag.NewFlagSet("suspects", flag.ContinueOnError)
	fs.StringVar(&opts.Iteration, "iteration", "", "")
	fs.StringVar(&opts.IterationAnnotation, "iteration-annotation", "", "")
	fs.IntVar(&opts.MinIterations, "min-iterations", 0, "")
	fs.StringVar(&format, "format", "text", "")
	fs.BoolVar(&asJSON, "json", false, "")
	fs.StringVar(&failOn, "fail-on", "", "")
	fs.StringVar(&from, "from", "auto", "")
	files, err := parseInterleaved(fs, args)
	if err == nil {
		err = checkSuspectsArgs(&opts, &format, asJSON, failOn, from, files)
	}
	if code, ok := badFlags(e, "suspects", suspectsUsage, err); !ok {
		return code
	}
	var all []report.Suspects
	code, found := exitClean, false
	for _, name := range files {
		s := report.Suspects{File: name}
		s.Result, err = check.FindSuspects(name, input.Options{Format: input.Format(from), Stdin: e.stdin}, opts)
		if s.Err = err; err != nil {
			fmt.Fprintf(e.stderr, "tlcheck: %v\n", err)
			code = exitInput
		} else {
			found = found || len(s.Result.Suspects) > 0
		}
		all = append(all, s)
	}
	out := bufio.NewWriter(e.stdout)
	report.WriteSuspects(out, report.Format(format), all, format == "text" && e.colour(e.stdout))
	if err := out.Flush(); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck: writing the report: %v\n", err)
		return exitInput
	}
	if found && failOn != "" && code == exitClean {
		return exitViolation
	}
	return code
}

func checkSuspectsArgs(opts *suspect.Options, format *string, asJSON bool, failOn, from string, files []string) error {
	if asJSON {
		if *format != "text" && *format != "json" {
			return fmt.Errorf("--json and --format %s contradict each other", safetext.Clip(*format))
		}
		*format = "json"
	}
	switch {
	case *format != "text" && *format != "json" && *format != "sarif":
		return fmt.Errorf("--format %q: want text, json or sarif", safetext.Clip(*format))
	case opts.Iteration != "" && opts.IterationAnnotation != "":
		return errors.New("--iteration and --iteration-annotation: name one marker")
	case failOn != "" && failOn != report.SuspectRule:
		return fmt.Errorf("--fail-on %q: want %s", safetext.Clip(failOn), report.SuspectRule)
	case len(files) == 0:
		return errors.New("no files to search")
	}
	return checkFrom(from)
}
