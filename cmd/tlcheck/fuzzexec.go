package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

const fuzzExecUsage = `usage: tlcheck fuzz --exec 'CMD ARGS' [--time D] [--seed N] [--out DIR]
                    [--call-timeout D] [--restart] [--replay FILE]
                    [--against 'CMD ARGS']

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
  --restart          after a driver crash, hang or protocol error, start it
                     again and search on; every finding is written
  --replay FILE      run the calls of FILE (a NAME.calls.jsonl) once instead
                     of searching, and report
  --against 'CMD'    a second driver of layer-5 programs: the same programs
                     run on both, their answers compared call by call (drive.Diff)

Exit status: 0 no failure, 1 a failure found, 2 bad usage, a driver that
cannot be started, or an unreadable --replay file.
`

type fuzzExecOptions struct {
	command     []string
	line        string
	time        time.Duration
	seed        uint64
	out         string
	callTimeout time.Duration
	restart     bool
	replay      string
	against     string
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

func parseFuzzExecArgs(args []string) (fuzzExecOptions, error) {
	var opts fuzzExecOptions
	fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&opts.line, "exec", "", "")
	fs.DurationVar(&opts.time, "time", 10*time.Second, "")
	seed := fs.String("seed", "", "")
	fs.StringVar(&opts.out, "out", ".", "")
	fs.DurationVar(&opts.callTimeout, "call-timeout", 2*time.Second, "")
	fs.BoolVar(&opts.restart, "restart", false, "")
	fs.StringVar(&opts.replay, "replay", "", "")
	fs.StringVar(&opts.against, "against", "", "")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if opts.command, err = splitWords(opts.line); err != nil {
		return opts, fmt.Errorf("--exec %q: %v", opts.line, err)
	}
	if len(opts.command) == 0 {
		return opts, errors.New("--exec: want the driver's command line")
	}
	if opts.time <= 0 || opts.callTimeout <= 0 {
		return opts, errors.New("--time and --call-timeout want positive durations")
	}
	opts.seed, err = parseSeed(*seed)
	return opts, err
}

func runFuzzExec(e *env, args []string) int {
	opts, err := parseFuzzExecArgs(args)
	if code, ok := badFlags(e, "fuzz", fuzzExecUsage, err); !ok {
		return code
	}
	cfg := drive.Config{Command: opts.command, CallTimeout: opts.callTimeout}
	if opts.replay != "" {
		return replayCalls(e, cfg, opts)
	}
	if opts.against != "" {
		return runFuzzAgainst(e, opts)
	}
	if err := atomicfile.CheckDir(opts.out); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --out: %v\n", err)
		return exitInput
	}
	r, err := drive.NewRunner(cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
		return exitInput
	}
	if r.Hello().Tfjs() {
		return runFuzzTfjs(e, r, opts)
	}
	start := time.Now()
	prog := newProgress(e, start)
	code, found := exitClean, 0
	_, n, err := r.Search(drive.Options{
		Seed:    opts.seed,
		Restart: opts.restart,
		More: func(n int) bool {
			prog.update(n)
			return time.Since(start) < opts.time
		},
		Found: func(f *drive.Finding) {
			prog.done()
			code, found = exitViolation, found+1
			showFinding(e, f, opts)
		},
	})
	prog.done()
	elapsed := time.Since(start)
	if cerr := r.Close(); cerr != nil && err == nil && found == 0 {
		err = cerr // a driver that misbehaved at the end is a finding too
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
		return max(code, exitViolation)
	}
	if found == 0 {
		fmt.Fprintf(e.stdout, "tlcheck fuzz: %d programs on %s in %s (%.0f programs/s), seed %d: no failure\n",
			n, describeDriver(r.Hello(), opts.line), elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), opts.seed)
	}
	for _, note := range r.Hello().Notes { // where the runtime departs from what it stands for: never silently
		fmt.Fprintf(e.stdout, "the driver notes: %s\n", note)
	}
	return code
}

func describeDriver(h drive.Hello, line string) string {
	if h.Source != "" {
		return h.Source
	}
	return line
}

// showFinding prints a finding and writes its files.
func showFinding(e *env, f *drive.Finding, opts fuzzExecOptions) {
	w := e.stdout
	fail := f.Failure()
	fmt.Fprintf(w, "tlcheck fuzz: program %d of seed %d failed on %s after %s\n",
		f.Index, f.Seed, opts.line, f.Duration.Round(time.Millisecond))
	fmt.Fprintf(w, "%s at call %d: %s\n\n", fail.What, fail.Call, fail.Message)
	fmt.Fprintf(w, "shrunk from %d steps to %d (%d calls with the teardown) in %d runs:\n%s\n",
		f.Steps, f.Size(), len(f.Result.Calls)+len(f.Result.TensorCalls), f.Shrinks, f.Result.Listing())
	if fail.Stderr != "" {
		fmt.Fprintf(w, "the driver's last stderr:\n%s\n\n", strings.TrimRight(fail.Stderr, "\n"))
	}
	files, err := f.Write(opts.out, "tlcheck-drive-seed"+strconv.FormatUint(f.Seed, 10), opts.line)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
		return
	}
	fmt.Fprintf(w, "calls written to %s\ntrace written to %s\n", files.Calls, files.Trace)
	fmt.Fprintf(w, "reproduce: tlcheck fuzz --exec %s --replay %s\n", shellQuote(opts.line), shellQuote(files.Calls))
	fmt.Fprintf(w, "check the trace: tlcheck replay %s\n", shellQuote(files.Trace))
}

// replayCalls runs a calls file once on the driver: calls of layers 2
// and 3, or of layer 5 for a driver that takes only those.
func replayCalls(e *env, cfg drive.Config, opts fuzzExecOptions) int {
	text, err := os.ReadFile(opts.replay)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --replay: %v\n", err)
		return exitInput
	}
	r, err := drive.NewRunner(cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
		return exitInput
	}
	if r.Hello().Tfjs() {
		return replayTfjs(e, r, text, opts)
	}
	var res *drive.Result
	var calls int
	if h := r.Hello(); h.Autograd() && !slices.Contains(h.Layers, 2) {
		var tcalls []drive.TensorCall
		if tcalls, err = drive.ReadTensorCalls(bytes.NewReader(text)); err == nil {
			calls = len(tcalls)
			res, err = r.RunTensor(tcalls)
		}
	} else {
		var cs []drive.Call
		if cs, err = drive.ReadCalls(bytes.NewReader(text)); err == nil {
			calls = len(cs)
			res, err = r.Run(cs)
		}
	}
	if err != nil { // an unreadable file, or calls the driver does not take
		r.Close()
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --replay %s: %v\n", opts.replay, err)
		return exitInput
	}
	if cerr := r.Close(); cerr != nil && res.Failure == nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --replay %s: %v\n", opts.replay, cerr)
		return exitViolation // a driver that misbehaved at the end is a finding
	}
	fmt.Fprintf(e.stdout, "%s", res.Listing())
	if fail := res.Failure; fail != nil {
		fmt.Fprintf(e.stdout, "\n%s at call %d: %s\n", fail.What, fail.Call, fail.Message)
		if fail.Stderr != "" {
			fmt.Fprintf(e.stdout, "the driver's last stderr:\n%s\n", strings.TrimRight(fail.Stderr, "\n"))
		}
		return exitViolation
	}
	fmt.Fprintf(e.stdout, "\n%d calls replayed on %s: no failure\n", calls, describeDriver(r.Hello(), opts.line))
	return exitClean
}

// splitWords splits a command line into words as a POSIX shell would,
// with quotes and backslashes and nothing else.
func splitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	in, quote := false, rune(0)
	for i := 0; i < len(s); i++ {
		c := rune(s[i])
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				w.WriteRune(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(s) && strings.ContainsRune(`"\$`+"`", rune(s[i+1])):
				i++
				w.WriteByte(s[i])
			default:
				w.WriteRune(c)
			}
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == '\\':
			if i+1 == len(s) {
				return nil, errors.New("a backslash at the end")
			}
			i++
			w.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("an unclosed %c", quote)
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}
