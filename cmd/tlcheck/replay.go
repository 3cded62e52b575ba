package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/mtrace"
)

const replayUsage = `usage: tlcheck replay [--json] [--from trace|mtrace] [--cpuprofile OUT] FILE...

Checks each FILE ("-": standard input) against the reference model and
prints a report per file: every violation with the events that explain it,
then totals. Flags may come before or after the files.

  --json         print the contract's JSON report instead: one object for
                 one file; for several files, one object per line (JSON
                 Lines), each with a "file" field, or {"file":..,"error":..}
                 for a file that could not be read
  --from FORMAT  what the files hold: trace (the tlcheck trace format, either
                 layout; the default) or mtrace (a glibc mtrace log)
  --cpuprofile OUT
                 write a CPU profile of the replay to OUT, for go tool pprof
                 (and for cmd/tlcheck/default.pgo, see reports/gen); OUT is
                 replaced whole, and may not be one of the files

Exit status: 0 no violation, 1 a violation, 2 bad usage or unreadable input
(the message names file, line, event and field); with several files, the
worst of theirs.
`

// replayOptions are replay's flags.
type replayOptions struct {
	json       bool
	from       string // "trace" or "mtrace"
	cpuprofile string // where to write a CPU profile; "" for none
}

func runReplay(e *env, args []string) (code int) {
	opts, files, err := parseReplayArgs(args)
	if code, ok := badFlags(e, "replay", replayUsage, err); !ok {
		return code
	}

	if opts.cpuprofile != "" {
		stop, err := startProfile(opts.cpuprofile, files)
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
	colour := !opts.json && e.colour(e.stdout)
	worst := exitClean
	for i, name := range files {
		rep, err := replayFile(e, name, opts.from)
		code := exitClean
		switch {
		case err != nil:
			code = exitInput
			fmt.Fprintf(e.stderr, "tlcheck: %v\n", err)
		case len(rep.Violations) > 0:
			code = exitViolation
		}
		worst = max(worst, code)

		switch {
		case opts.json && len(files) == 1:
			if err == nil {
				writeJSON(out, rep)
			}
		case opts.json:
			writeJSONLine(out, name, rep, err)
		default:
			if len(files) > 1 {
				if i > 0 {
					fmt.Fprintln(out)
				}
				writeHeading(out, name, colour)
				if err != nil {
					fmt.Fprintln(out, "not checked: unreadable input")
					continue
				}
			}
			if err == nil {
				writeHuman(out, rep, colour)
			}
		}
		if ferr := out.Flush(); ferr != nil {
			fmt.Fprintf(e.stderr, "tlcheck: writing the report: %v\n", ferr)
			return exitInput
		}
	}
	return worst
}

// parseReplayArgs parses replay's flags, which may come before, between or
// after the files; "--" ends the flags.
func parseReplayArgs(args []string) (replayOptions, []string, error) {
	opts := replayOptions{from: "trace"}
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // replay prints its own usage
	fs.BoolVar(&opts.json, "json", false, "")
	fs.StringVar(&opts.from, "from", "trace", "")
	fs.StringVar(&opts.cpuprofile, "cpuprofile", "", "")
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return opts, nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			files = append(files, rest...) // everything after "--" is a file
			break
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
	if opts.from != "trace" && opts.from != "mtrace" {
		return opts, nil, fmt.Errorf("--from %q: want trace or mtrace", opts.from)
	}
	if len(files) == 0 {
		return opts, nil, errors.New("no files to replay")
	}
	return opts, files, nil
}

// replayFile checks one file against the model. Its error is an input
// error naming the file (exit 2); the report is then meaningless.
func replayFile(e *env, name, from string) (traces.Report, error) {
	var r io.Reader
	display := name
	if name == "-" {
		r, display = e.stdin, "<stdin>"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return traces.Report{}, err // *PathError: "open NAME: ..."
		}
		defer f.Close()
		r = f
	}

	var src traces.Source
	if from == "mtrace" {
		src = mtrace.NewReader(r)
	} else {
		tr, err := traces.NewReader(r)
		if err != nil {
			return traces.Report{}, inFile(err, display)
		}
		src = tr
	}
	pf, stop := prefetch(src)
	defer stop()
	rep, err := model.Replay(pf)
	if err != nil {
		return traces.Report{}, inFile(err, display)
	}
	return rep, nil
}

// inFile puts the file name into an input error, so that its message
// names the place: "a.jsonl:12: event 10: field "addr": ...".
func inFile(err error, name string) error {
	var te *traces.Error
	if errors.As(err, &te) {
		te.File = name
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}
