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

const suspectsUsage = `usage: tlcheck suspects [flags] FILE...

  tlcheck suspects [--iteration SITE | --iteration-annotation NAME]
                   [--min-iterations N] [--format text|json|sarif]
                   [--fail-on leak-suspect]
                   [--from auto|trace|mtrace|torch-snapshot] FILE...

Names leak suspects in traces without an end (a PyTorch memory snapshot
taken mid-run, where no leak check can run): it cuts the run into the
iterations of its loop, found from the repeating pattern of allocation
sites, and reports each site whose live blocks grow by a steady amount
every iteration and are never freed (a loss kept in a list, an
evaluation loop's outputs kept with their graphs), with how sure it is
and the blocks as evidence. Package check/suspect says how.

  --iteration SITE  the allocation that starts each iteration (the batch
                    moved to the device: train.py:31), where detection
                    fails; a site's end after a '/' names it
  --iteration-annotation NAME
                    a snapshot's external annotation that starts each
                    iteration (Optimizer.step: the part of its name before
                    '#'); without either flag, where no site marks the
                    iterations, the annotation that recurs most does
  --min-iterations N
                    the fewest iterations a suspect's blocks must span
                    (default 3)
  --format F        text (the default), json (one object; one a line with
                    a "file" field for several files) or sarif (one result
                    a suspect, level warning, rule leak-suspect)
  --json            the same as --format json
  --fail-on leak-suspect
                    a suspect fails the run (exit 1); without it suspects
                    are reported and the run passes
  --from FORMAT     what the files hold, as for replay

Exit status: 0 no suspect, or suspects without --fail-on leak-suspect;
1 a suspect under --fail-on leak-suspect; 2 bad usage or unreadable input.
`

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
