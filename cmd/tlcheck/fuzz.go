package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/lang"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/internal/plural"
	"github.com/tlcheck/tlcheck/properties"
)

const fuzzUsage = `usage: tlcheck fuzz [--fault NAME] [--source] [--time D] [--seed N] [--out DIR]
       tlcheck fuzz --replay FILE.tl [--fault NAME]

Generates programs and runs each against the runtime (package impl), with
the reference model as oracle, until --time passes or a program breaks a
property. A failing program is shrunk to a few steps and its trace is
written to a new file in --out, which 'tlcheck replay FILE' rejects.

  --fault NAME  switch on fault NAME of the catalog ('tlcheck faults'); a
                codegen fault implies --source. The program and source
                engines' faults only: the pool, registry and autograd
                faults are refused ('tlcheck selftest' hunts them)
  --source      generate source programs (package impl/lang) and lower
                them to runtime calls, with the interpreter as a second
                oracle; a failing program's shrunk source is printed and
                saved next to its trace, as FILE.tl
  --replay FILE.tl
                generate nothing: lower the source program in FILE.tl (as
                --source saves one) onto the runtime as it is now, and
                check it as --source checks each program. Its trace shows
                the run of the code that found it; this shows whether the
                code of today still fails. --time, --seed and --out are
                not used
  --time D      how long to search, as a Go duration (default 10s)
  --seed N      the seed of the programs (default: from the clock, printed);
                the same seed generates the same programs
  --out DIR     where to write the trace (default: the current directory);
                an existing file is never overwritten. DIR must exist and
                be writable: it is checked before the search starts

Progress goes to standard error when it is a terminal. The trace is also
printed on standard output, so that it is never lost: if writing it fails
after all, the error goes to standard error and the exit status is still 1.

'tlcheck fuzz --exec CMD' drives a runtime in another process instead:
see below.

Exit status: 0 no failure found, 1 a failure found (trace printed, and
written unless the error says otherwise), 2 bad usage, an unusable --out,
or a --replay FILE that cannot be read or is no well-formed program.

` + fuzzExecUsage

// fuzzOptions are fuzz's flags.
type fuzzOptions struct {
	fault  string
	time   time.Duration
	seed   uint64
	out    string
	source bool
	replay string // a saved source program to check again; "" for none
}

func runFuzz(e *env, args []string) int {
	if wantsExec(args) { // a runtime in another process: fuzzexec.go
		return runFuzzExec(e, args)
	}
	opts, err := parseFuzzArgs(args)
	if code, ok := badFlags(e, "fuzz", fuzzUsage, err); !ok {
		return code
	}
	cfg := impl.Config{}
	if opts.fault != "" {
		info, ok := impl.LookupFault(opts.fault)
		if !ok {
			fmt.Fprintf(e.stderr, "tlcheck fuzz: unknown fault %q; the catalog has (fuzz takes the %s and %s engines'):\n%s",
				opts.fault, impl.EngineProgram, impl.EngineSource, allFaultNames())
			return exitInput
		}
		switch info.Engine {
		case impl.EngineProgram:
		case impl.EngineSource:
			opts.source = true // a codegen fault: only source programs show it
		case impl.EnginePool, impl.EngineRegistry, impl.EngineAutograd:
			// Generated runtime programs cannot reach it: another engine
			// hunts it.
			return refuseFault(e, info)
		default: // an engine added to the catalog after this switch
			return refuseFault(e, info)
		}
		cfg.Faults = []impl.Fault{impl.Fault(opts.fault)}
	}
	if opts.replay != "" {
		return replaySource(e, cfg, opts)
	}
	// A failure found after minutes of search must have somewhere to go.
	if err := atomicfile.CheckDir(opts.out); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --out: %v\n", err)
		return exitInput
	}

	if opts.source {
		return fuzzSource(e, cfg, opts)
	}
	start := time.Now()
	prog := newProgress(e, start)
	p, f, n := properties.Search(cfg, opts.seed, func(n int) bool {
		prog.update(n)
		return time.Since(start) < opts.time
	})
	elapsed := time.Since(start)
	prog.done()
	what := "the runtime"
	if opts.fault != "" {
		what = "the runtime with fault " + opts.fault
	}
	if f == nil {
		fmt.Fprintf(e.stdout, "tlcheck fuzz: %s against %s in %s (%s), seed %d: no failure\n",
			plural.Count(n, "program"), what, elapsed.Round(time.Millisecond), plural.Rate(float64(n)/elapsed.Seconds(), "program"), opts.seed)
		return exitClean
	}

	small, sf := properties.Shrink(p, cfg)
	var trace bytes.Buffer
	if err := sf.WriteTrace(&trace); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
		return exitInput
	}
	label := "runtime"
	if opts.fault != "" {
		label = opts.fault
	}
	base := "tlcheck-" + label + "-seed" + strconv.FormatUint(opts.seed, 10)
	// The directory was checked, but it may have gone since: then the
	// trace printed below is the only copy, and the error says so.
	path, werr := writeCounterexample(opts.out, base, ".jsonl", trace.Bytes())
	if werr != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: writing the trace: %v; it is printed on standard output instead\n", werr)
	}
	w := e.stdout
	fmt.Fprintf(w, "tlcheck fuzz: program %d of seed %d failed against %s after %s\n",
		n, opts.seed, what, elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "property broken: %s", sf.Property)
	if others := slices.DeleteFunc(slices.Clone(sf.Broken), func(p string) bool { return p == sf.Property }); len(others) > 0 {
		fmt.Fprintf(w, " (also: %s)", strings.Join(others, ", "))
	}
	fmt.Fprintf(w, "\n%s\n\n", strings.TrimRight(sf.Error(), "\n"))
	for _, v := range sf.Result.Unexplained() {
		fmt.Fprintf(w, "the trace shows: %s at event %d: %s\n", v.Kind, v.Event, v.Message)
	}
	fmt.Fprintf(w, "\nshrunk from %s to %d:\n%v\n", plural.Count(len(p.Steps), "step"), len(small.Steps), small)
	if werr != nil {
		fmt.Fprintf(w, "trace (%s), NOT written (%v); save it to a file to replay it:\n%s\n", plural.Count(sf.Events(), "event"), werr, trace.String())
		fmt.Fprintf(w, "reproduce: tlcheck replay FILE\n")
		return exitViolation
	}
	fmt.Fprintf(w, "trace (%s), written to %s:\n%s\n", plural.Count(sf.Events(), "event"), path, trace.String())
	fmt.Fprintf(w, "reproduce: tlcheck replay %s\n", shellQuote(path))
	return exitViolation
}

// writeCounterexample writes a failing program's trace; a variable so that
// a test can make the write fail after --out was checked.
var writeCounterexample = atomicfile.CreateNew

func parseFuzzArgs(args []string) (fuzzOptions, error) {
	opts := fuzzOptions{}
	fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // fuzz prints its own usage
	fs.StringVar(&opts.fault, "fault", "", "")
	fs.DurationVar(&opts.time, "time", 10*time.Second, "")
	seed := fs.String("seed", "", "")
	fs.StringVar(&opts.out, "out", ".", "")
	fs.BoolVar(&opts.source, "source", false, "")
	fs.StringVar(&opts.replay, "replay", "", "")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if opts.time <= 0 {
		return opts, fmt.Errorf("--time %v: want a positive duration", opts.time)
	}
	s, err := parseSeed(*seed)
	if err != nil {
		return opts, err
	}
	opts.seed = s
	return opts, nil
}

// parseSeed parses --seed; empty means a seed from the clock.
func parseSeed(s string) (uint64, error) {
	if s == "" {
		return uint64(time.Now().UnixNano()), nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("--seed %q: want a non-negative integer", s)
	}
	return n, nil
}

// refuseFault refuses a fault another engine hunts, naming its engine
// and the engines fuzz takes, then listing the faults fuzz takes.
func refuseFault(e *env, info impl.FaultInfo) int {
	fmt.Fprintf(e.stderr, "tlcheck fuzz: fault %s is hunted by the %s engine, not by generated programs (tlcheck selftest runs it); fuzz takes the %s and %s engines' faults:\n%s",
		info.Name, info.Engine, impl.EngineProgram, impl.EngineSource, faultNames())
	return exitInput
}

// faultNames lists the names of the catalog's program and codegen
// faults, the ones fuzz can switch on, one an indented line.
func faultNames() string {
	var b strings.Builder
	for _, f := range impl.Catalog() {
		if f.Engine != impl.EngineProgram && f.Engine != impl.EngineSource {
			continue
		}
		fmt.Fprintf(&b, "  %s\n", f.Name)
	}
	return b.String()
}

// allFaultNames lists every fault of the catalog with its engine, one an
// indented line.
func allFaultNames() string {
	var b strings.Builder
	for _, f := range impl.Catalog() {
		fmt.Fprintf(&b, "  %-40s %s\n", f.Name, f.Engine)
	}
	return b.String()
}

// shellQuote quotes a path for a command line a user can paste, when it
// needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// progress writes "N programs, R/s" to stderr, a few times a second, when
// stderr is a terminal; otherwise it writes nothing.
type progress struct {
	w     io.Writer
	start time.Time
	next  time.Time
	shown bool
}

func newProgress(e *env, start time.Time) *progress {
	if e.isTTY == nil || !e.isTTY(e.stderr) {
		return &progress{}
	}
	return &progress{w: e.stderr, start: start, next: start.Add(250 * time.Millisecond)}
}

func (p *progress) update(n int) {
	if p.w == nil || n%64 != 0 {
		return
	}
	if now := time.Now(); now.After(p.next) {
		p.next = now.Add(250 * time.Millisecond)
		fmt.Fprintf(p.w, "\r%s, %.0f/s ", plural.Count(n, "program"), float64(n)/now.Sub(p.start).Seconds())
		p.shown = true
	}
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// fuzzSource is fuzz over source programs: generated, lowered onto the
// runtime, checked by the model and the interpreter; a failure is shrunk
// on the source, and the program is written beside its trace.
func fuzzSource(e *env, cfg impl.Config, opts fuzzOptions) int {
	start := time.Now()
	prog := newProgress(e, start)
	p, f, n := properties.SearchSource(cfg, opts.seed, func(n int) bool {
		prog.update(n)
		return time.Since(start) < opts.time
	})
	elapsed := time.Since(start)
	prog.done()
	what := "the lowering and the runtime"
	if opts.fault != "" {
		what += " with fault " + opts.fault
	}
	if f == nil {
		fmt.Fprintf(e.stdout, "tlcheck fuzz: %s against %s in %s (%s), seed %d: no failure\n",
			plural.Count(n, "source program"), what, elapsed.Round(time.Millisecond), plural.Rate(float64(n)/elapsed.Seconds(), "program"), opts.seed)
		return exitClean
	}
	small, sf := properties.ShrinkSource(p, cfg)
	if sf == nil {
		small, sf = p, f
	}
	var trace bytes.Buffer
	if err := sf.WriteTrace(&trace); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
		return exitInput
	}
	label := "source"
	if opts.fault != "" {
		label = opts.fault
	}
	base := "tlcheck-" + label + "-seed" + strconv.FormatUint(opts.seed, 10)
	path, werr := writeCounterexample(opts.out, base, ".jsonl", trace.Bytes())
	var srcPath string
	if werr == nil {
		// Named as the trace is, so the two go together even when the
		// trace's name had to take a number. The program says how it was
		// found and how to check it again.
		withFault := ""
		if opts.fault != "" {
			withFault = " --fault " + opts.fault
		}
		head := fmt.Sprintf("// Found by tlcheck fuzz --source --seed %d%s: %s.\n// Check it again, lowered by the code of today: tlcheck fuzz --replay THIS_FILE%s\n",
			opts.seed, withFault, sf.Property, withFault)
		srcPath, werr = writeCounterexample(opts.out, strings.TrimSuffix(filepath.Base(path), ".jsonl"), ".tl", []byte(head+small.String()))
	}
	if werr != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: writing the counterexample: %v; it is printed on standard output instead\n", werr)
	}
	w := e.stdout
	fmt.Fprintf(w, "tlcheck fuzz: source program %d of seed %d failed against %s after %s\n",
		n, opts.seed, what, elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "property broken: %s\n%s\n\n", sf.Property, sf.Message)
	fmt.Fprintf(w, "shrunk from %s to %d:\n%s\n", plural.Count(lang.Statements(p), "statement"), lang.Statements(small), small)
	if werr != nil {
		fmt.Fprintf(w, "trace (%s), NOT written (%v):\n%s\n", plural.Count(sf.Events(), "event"), werr, trace.String())
		return exitViolation
	}
	fmt.Fprintf(w, "program written to %s\ntrace (%s), written to %s:\n%s\n", srcPath, plural.Count(sf.Events(), "event"), path, trace.String())
	fmt.Fprintf(w, "reproduce: tlcheck replay %s\n", shellQuote(path))
	again := "tlcheck fuzz --replay " + shellQuote(srcPath)
	if opts.fault != "" {
		again += " --fault " + opts.fault
	}
	fmt.Fprintf(w, "check the program again after a change: %s\n", again)
	return exitViolation
}

// replaySource is fuzz --replay: the saved source program lowered and
// checked as --source checks each program it generates.
func replaySource(e *env, cfg impl.Config, opts fuzzOptions) int {
	src, err := os.ReadFile(opts.replay)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --replay: %v\n", err)
		return exitInput
	}
	p, err := lang.Parse(string(src))
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %s: %v\n", opts.replay, err)
		return exitInput
	}
	f, err := properties.RunSource(p, cfg)
	if err != nil { // ill-formed: Check names the function and statement
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %s: %v\n", opts.replay, err)
		return exitInput
	}
	what := "the lowering and the runtime"
	if opts.fault != "" {
		what += " with fault " + opts.fault
	}
	if f == nil {
		fmt.Fprintf(e.stdout, "tlcheck fuzz: %s (%s) against %s: no failure\n", opts.replay, plural.Count(lang.Statements(p), "statement"), what)
		return exitClean
	}
	fmt.Fprintf(e.stdout, "tlcheck fuzz: %s failed against %s\nproperty broken: %s\n%s\n\n%s", opts.replay, what, f.Property, f.Message, p)
	return exitViolation
}
