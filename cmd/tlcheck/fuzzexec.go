package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/internal/plural"
	"github.com/tlcheck/tlcheck/traces"
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

type fuzzExecOptions struct {
	command      []string
	line         string
	time         time.Duration
	seed         uint64
	out          string
	callTimeout  time.Duration
	startTimeout time.Duration
	restart      bool
	replay       string
	against      string
	misuse       drive.Misuse
	steps        int
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
	fs.DurationVar(&opts.startTimeout, "start-timeout", defaultStartTimeout, "")
	fs.BoolVar(&opts.restart, "restart", false, "")
	fs.StringVar(&opts.replay, "replay", "", "")
	fs.StringVar(&opts.against, "against", "", "")
	misuse := fs.Bool("misuse", false, "")
	fs.IntVar(&opts.steps, "steps", 0, "")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	opts.misuse = misuseFlag(fs, *misuse)
	if opts.steps < 0 {
		return opts, fmt.Errorf("--steps %d: want a number of steps, 0 or more", opts.steps)
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
	if opts.time <= 0 || opts.callTimeout <= 0 || opts.startTimeout <= 0 {
		return opts, errors.New("--time, --call-timeout and --start-timeout want positive durations")
	}
	opts.seed, err = parseSeed(*seed)
	return opts, err
}

// defaultStartTimeout is --start-timeout's default: the PyTorch driver
// took 10.7s to say hello on a loaded machine, importing torch.
const defaultStartTimeout = 60 * time.Second

// config is the drive.Config of a driver started with command under the
// options' timeouts, which its messages name by their flags.
func (opts fuzzExecOptions) config(command []string) drive.Config {
	return drive.Config{Command: command, CallTimeout: opts.callTimeout, StartTimeout: opts.startTimeout,
		CallTimeoutFlag: "--call-timeout", StartTimeoutFlag: "--start-timeout"}
}

func runFuzzExec(e *env, args []string) int {
	opts, err := parseFuzzExecArgs(args)
	if code, ok := badFlags(e, "fuzz", fuzzExecUsage, err); !ok {
		return code
	}
	cfg := opts.config(opts.command)
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
		Misuse:  opts.misuse,
		Steps:   opts.steps,
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
	last := r.Last()
	cerr := r.Close()
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
		return max(code, exitViolation)
	}
	if found == 0 {
		fmt.Fprintf(e.stdout, "tlcheck fuzz: %s on %s in %s (%s), seed %d: no failure in the programs\n",
			plural.Count(n, "program"), describeDriver(r.Hello(), opts.line), elapsed.Round(time.Millisecond), plural.Rate(float64(n)/elapsed.Seconds(), "program"), opts.seed)
	}
	if cerr != nil { // a driver that misbehaved at the end is a finding too, and loses nothing above
		showEndTrouble(e, cerr, last, opts)
		code = exitViolation
	}
	for _, note := range r.Hello().Notes { // where the runtime departs from what it stands for: never silently
		fmt.Fprintf(e.stdout, "the driver notes: %s\n", note)
	}
	return code
}

// showEndTrouble reports a driver that misbehaved when its input ended
// (exited with a failure, hung, wrote after its last answer, left a
// process holding its stdout), with its stderr, and writes the last
// program it ran as a calls file, whose --replay ends the driver the
// same way.
func showEndTrouble(e *env, cerr error, last *drive.Result, opts fuzzExecOptions) {
	fmt.Fprintf(e.stdout, "tlcheck fuzz: the driver misbehaved at the end of its input: %v\n", cerr)
	var t *drive.Trouble
	if last == nil || !errors.As(cerr, &t) {
		return
	}
	res := *last
	res.Failure = &drive.Failure{What: string(t.Kind), Call: len(res.Calls) + len(res.TensorCalls), Event: -1,
		Message: "at the end of its input, after this program: " + t.What, Stderr: t.Stderr}
	f := &drive.Finding{Result: &res, Seed: opts.seed}
	files, err := f.Write(opts.out, "tlcheck-drive-seed"+strconv.FormatUint(opts.seed, 10)+"-end", opts.line)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
		return
	}
	fmt.Fprintf(e.stdout, "the last program it ran written to %s\nreproduce: tlcheck fuzz --exec %s --replay %s\n",
		files.Calls, shellQuote(opts.line), shellQuote(files.Calls))
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
	fmt.Fprintf(w, "shrunk from %s to %d (%s with the teardown) in %s:\n%s\n",
		plural.Count(f.Steps, "step"), f.Size(), plural.Count(len(f.Result.Calls)+len(f.Result.TensorCalls), "call"), plural.Count(f.Shrinks, "run"), f.Result.Listing())
	if fail.Stderr != "" || fail.Trouble() {
		fmt.Fprintf(w, "%s\n\n", drive.StderrText(fail.Stderr))
	}
	if f.Determinism != "" {
		fmt.Fprintf(w, "warning: %s\n\n", f.Determinism)
	}
	files, err := f.Write(opts.out, "tlcheck-drive-seed"+strconv.FormatUint(f.Seed, 10), opts.line)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
		return
	}
	fmt.Fprintf(w, "calls written to %s\ntrace written to %s\n", files.Calls, files.Trace)
	fmt.Fprintf(w, "reproduce: tlcheck fuzz --exec %s --replay %s\n", shellQuote(opts.line), shellQuote(files.Calls))
	if !slices.Contains(traces.Kinds(), traces.Kind(fail.What)) {
		fmt.Fprintf(w, "(a %s failure is in the driver's answers, not in its runtime's events: --replay shows it, and tlcheck replay of the trace finds only what the events show)\n", fail.What)
	}
	if files.Suppress != "" { // the violations the run found explained: replay agrees with the run
		fmt.Fprintf(w, "check the trace: tlcheck replay --suppressions %s %s\n", shellQuote(files.Suppress), shellQuote(files.Trace))
	} else {
		fmt.Fprintf(w, "check the trace: tlcheck replay %s\n", shellQuote(files.Trace))
	}
}

// splitWords splits a command line into words as a POSIX shell would,
// with quotes and backslashes and nothing else. It works on bytes: every
// byte it acts on (quotes, backslash, blanks) is ASCII, which no byte of
// a multi-byte UTF-8 sequence is, so the bytes of a word pass through as
// they are (/tmp/drïver.py stays that path).
func splitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0:
				i++
				w.WriteByte(s[i])
			default:
				w.WriteByte(c)
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
			w.WriteByte(c)
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
