package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/mtrace"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
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
                 warnings; default: every kind
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

	var syms *mtrace.Symbols
	if opts.binary != "" {
		// Read once for all the files, and before any: a binary without
		// line information fails the command, not each file.
		if syms, err = mtrace.NewSymbols(opts.binary); err != nil {
			fmt.Fprintf(e.stderr, "tlcheck replay: --binary: %v\n", err)
			return exitInput
		}
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
	format := opts.check.format
	colour := format == formatText && e.colour(e.stdout)
	worst := exitClean
	var whole []outcome // for the formats that are one document
	for i, name := range files {
		c := newCollector(name, p, opts.maxFindings)
		rep, from, err := replayFile(e, name, opts.from, syms, c.add)
		if err != nil {
			fmt.Fprintf(e.stderr, "tlcheck: %v\n", err)
		}
		o := c.finish(rep, err)
		o.snapshot = from == fromSnapshot
		if o.incompleteFails(p) {
			fmt.Fprintf(e.stderr, "tlcheck: %s\n", requireEndMessage(name))
		}
		worst = max(worst, o.code(p))

		switch format {
		case formatJSON:
			writeJSONOutcome(out, &o, p, len(files) > 1)
		case formatText:
			writeTextOutcome(out, &o, p, i, len(files) > 1, colour)
		default:
			whole = append(whole, o)
		}
		if ferr := out.Flush(); ferr != nil {
			fmt.Fprintf(e.stderr, "tlcheck: writing the report: %v\n", ferr)
			return exitInput
		}
	}
	if whole != nil {
		writeOutcomes(out, whole, p, format, runInfo{command: "replay"}, false)
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
	opts := replayOptions{from: "auto"}
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	opts.check.register(fs)
	fs.StringVar(&opts.from, "from", "auto", "")
	fs.StringVar(&opts.cpuprofile, "cpuprofile", "", "")
	fs.StringVar(&opts.binary, "binary", "", "")
	fs.IntVar(&opts.maxFindings, "max-findings", -1, "")
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
	switch {
	case opts.maxFindings < -1:
		return opts, nil, fmt.Errorf("--max-findings %d: want a count, or 0 for no limit", opts.maxFindings)
	case opts.maxFindings == -1 && opts.check.format == formatText:
		opts.maxFindings = defaultMaxFindings
	case opts.maxFindings == -1:
		opts.maxFindings = 0
	}
	return opts, files, nil
}

// fromSnapshot is --from's name for a PyTorch memory snapshot.
const fromSnapshot = "torch-snapshot"

// checkFrom checks --from's value.
func checkFrom(from string) error {
	switch from {
	case "auto", "trace", "mtrace", fromSnapshot:
		return nil
	}
	return fmt.Errorf("--from %q: want auto, trace, mtrace or torch-snapshot", clip(from))
}

// replayFile checks one file against the model, resolving an mtrace log's
// callers with syms when it is not nil, and hands each violation to f in
// event order (see model.ReplayFunc); the report's Violations is nil. It
// also returns what the file was read as ("trace", "mtrace" or
// "torch-snapshot"). Its error is an input error naming the file (exit
// 2); the report is then meaningless.
func replayFile(e *env, name, from string, syms *mtrace.Symbols, f func(traces.Violation, uint64)) (traces.Report, string, error) {
	in, err := openInput(e, name, from, syms)
	if err != nil {
		return traces.Report{}, "", err
	}
	defer in.close()
	rep, err := model.ReplayFunc(in.src, f)
	if err != nil {
		return traces.Report{}, in.from, in.explain(err)
	}
	return rep, in.from, nil
}

// input is an opened trace or mtrace log, read ahead on a goroutine of its
// own (see prefetch).
type input struct {
	src     traces.Source
	display string // the name messages give it: the file, or <stdin>
	from    string // "trace", "mtrace" or "torch-snapshot": what it was read as
	prefix  []byte // its first bytes, which told the formats apart
	close   func()
}

// openInput opens name ("-": standard input) as from says: "trace",
// "mtrace", "torch-snapshot", or "auto", which reads a file that starts
// with a pickle's PROTO byte as a snapshot, one whose first line starts as
// only an mtrace line can as mtrace, and anything else as a trace. An mtrace
// log's callers are resolved with syms when it is not nil. Its error is
// an input error naming the file, with a hint where the file looks like
// the other format.
func openInput(e *env, name, from string, syms *mtrace.Symbols) (*input, error) {
	var r io.Reader
	in := &input{display: name, close: func() {}}
	if name == "-" {
		r, in.display = e.stdin, "<stdin>"
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, err // *PathError: "open NAME: ..."
		}
		r, in.close = f, func() { f.Close() }
	}

	r, prefix, err := sniff(r)
	if err != nil {
		in.close()
		return nil, fmt.Errorf("%s: %w", in.display, err)
	}
	in.prefix = prefix
	isLog := mtrace.Sniff(prefix)
	isSnap := isPickle(prefix)
	in.from = from
	if from == "auto" {
		switch {
		case isSnap:
			in.from = fromSnapshot
		case isLog:
			in.from = "mtrace"
		default:
			in.from = "trace"
		}
	}

	var src traces.Source
	switch {
	case in.from == fromSnapshot:
		sr, err := torchsnap.NewReader(r)
		if err != nil {
			in.close()
			return nil, inFile(fmt.Errorf("reading a PyTorch memory snapshot: %w", err), in.display)
		}
		src = sr
	case in.from == "mtrace":
		src = mtrace.NewReader(r)
		if syms != nil {
			src = syms.Source(src)
		}
	default:
		tr, err := traces.NewReader(r)
		if err != nil {
			in.close()
			switch {
			case isLog:
				err = fmt.Errorf("%w (this looks like a glibc mtrace log: read it with --from mtrace, or without --from)", err)
			case isSnap:
				err = fmt.Errorf("%w (this looks like a pickle, such as a PyTorch memory snapshot: read it with --from torch-snapshot, or without --from)", err)
			}
			return nil, inFile(err, in.display)
		}
		src = tr
	}
	pf, stop := prefetch(src)
	closeFile := in.close
	in.src, in.close = pf, func() { stop(); closeFile() }
	return in, nil
}

// explain names the file in an error met while reading the input, with a
// hint where an mtrace log's error comes from a file that looks like a
// trace.
func (in *input) explain(err error) error {
	if in.from == "mtrace" && looksLikeTrace(in.prefix) {
		err = fmt.Errorf("%w (this looks like a tlcheck trace: read it with --from trace, or without --from)", err)
	}
	return inFile(err, in.display)
}

// sniffSize is how much of an input replay reads to tell the formats apart:
// far more than the first field of the first line needs.
const sniffSize = 512

// sniff reads the first bytes of r and returns a reader of all of r again,
// with those bytes. A file that can seek goes back to where it was, so
// that the trace reader can still seek in it (see traces.NewReader);
// anything else (a pipe) gets the bytes put back in front of it.
func sniff(r io.Reader) (io.Reader, []byte, error) {
	prefix := make([]byte, sniffSize)
	n, err := io.ReadFull(r, prefix)
	prefix = prefix[:n]
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, nil, fmt.Errorf("reading the input: %w", err)
	}
	if s, ok := r.(io.Seeker); ok {
		if _, err := s.Seek(-int64(n), io.SeekCurrent); err == nil {
			return r, prefix, nil
		}
	}
	return io.MultiReader(bytes.NewReader(prefix), r), prefix, nil
}

// isPickle reports whether an input begins as a pickle of protocol 2 or
// later does, with PROTO (0x80): no trace (JSON, which is UTF-8 and starts
// with "{") and no mtrace log (text) can start with that byte.
func isPickle(prefix []byte) bool {
	return len(prefix) > 1 && prefix[0] == 0x80 && prefix[1] <= 5
}

// looksLikeTrace reports whether an input begins as a tlcheck trace does:
// with "{", after blanks.
func looksLikeTrace(prefix []byte) bool {
	b := bytes.TrimLeft(prefix, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
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
