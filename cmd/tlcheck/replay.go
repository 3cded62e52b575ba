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

const replayUsage = `usage: tlcheck replay [flags] FILE...

  tlcheck replay [--format text|json|sarif|junit] [--fail-on KINDS]
                 [--require-end] [--suppressions FILE]...
                 [--max-findings N] [--from auto|trace|mtrace|torch-snapshot]
                 [--binary PROG] [--cpuprofile OUT] FILE...

Checks each FILE ("-": standard input) against the reference model and
prints a report per file: every violation with the events that explain it,
then totals. Flags may come before or after the files.

  --format F     text: the human report (the default); json: the
                 contract's JSON report, one object for one file, or for
                 several files one object per line (JSON Lines) with a
                 "file" field; a file that could not be read gets
                 {"file":..,"error":..}; sarif: SARIF 2.1.0, one result per
                 violation, for code-scanning systems; junit: JUnit XML,
                 one test case per file, for CI test tabs
  --json         the same as --format json
  --fail-on KINDS
                 a comma list of violation kinds that fail the run (exit
                 1); violations of other kinds are still reported, as
                 warnings; default: every kind. A snapshot's leak
                 suspects (as tlcheck suspects finds them, in the same
                 replay) are always listed; leak-suspect fails on one,
                 and searches any trace without an end; never part of
                 the default
  --require-end  fail a trace that stops without an end event (a crashed
                 run, which gets no leak check)
  --suppressions FILE
                 accept known findings: FILE holds KIND:PATTERN lines (KIND
                 a violation kind or *; PATTERN a glob, * matching any
                 text, matched against the whole of each site in a
                 violation's history; # comments). Suppressed violations
                 are listed as such and do not fail the run. May be given
                 several times
  --max-findings N
                 list at most N violations a file (0: all of them); the
                 rest are counted by kind, still decide the exit status, and
                 leaks are summed by allocation site whatever N is (LEAKS BY
                 SITE in the human report, "leak_sites" in JSON), so memory
                 and output stay small when a trace leaks millions of
                 objects. Default: 1000 for the human report, all for the
                 other formats
  --from FORMAT  what the files hold: trace (the tlcheck trace format, either
                 layout), mtrace (a glibc mtrace log), torch-snapshot (a
                 PyTorch memory snapshot, the pickle that
                 torch.cuda.memory._dump_snapshot() writes), or auto (the
                 default): a file that starts with byte 0x80 (a pickle's
                 PROTO) is read as a snapshot, one whose first line that is
                 not blank starts as only an mtrace line can ("= Start",
                 "@ caller + ...", "+ 0x...", ...) as mtrace, any other as a
                 trace. A named format is used as given, with a hint when
                 the file looks like another. A snapshot is taken mid-run:
                 what it still holds is live, not leaked, and no leak check
                 runs
  --binary PROG  for mtrace logs: turn the callers that lie in PROG, the
                 program that wrote the log (built with -g), into file:line
                 from its DWARF line table, as glibc's 'mtrace PROG LOG'
                 does with addr2line (a PIE's offsets included); other
                 callers, and traces, are kept as written
  --cpuprofile OUT
                 write a CPU profile of the replay to OUT, for go tool pprof
                 (and for cmd/tlcheck/default.pgo, see reports/gen); OUT is
                 replaced whole, and may not be one of the files

Input errors name the file, line, event and field, and quote at most a
few dozen bytes of the input. An empty mtrace log is an error (glibc writes
"= Start" when tracing begins), and so is a UTF-8 byte-order mark at the
start of a file, in either format: the message names it.

Exit status: 0 no violation, 1 a violation that fails the run (or, with
--require-end, a trace without end), 2 bad usage or unreadable input; with
several files, the worst of theirs.
`

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
