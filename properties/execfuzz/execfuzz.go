package execfuzz

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/internal/plural"
	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/properties/harness"
	"github.com/tlcheck/tlcheck/traces"
)

// Run is one `tlcheck fuzz --exec` run: with Replay, the calls file run
// once (on both drivers with Against); with Against, the differential
// search; with a tfjs driver, tfjs programs; else the search of programs
// of the calls the driver offers, each finding shrunk, shown and written
// into Out. Found where a failure was found (a driver that misbehaves is
// one too), Trouble where a driver cannot be started or an input is
// unusable (said on Stderr).
func Run(opts Options) harness.Outcome {
	cfg := opts.config(opts.Command)
	if opts.Replay != "" {
		return replayCalls(cfg, opts)
	}
	if opts.Against != "" {
		return runFuzzAgainst(opts)
	}
	if err := atomicfile.CheckDir(opts.Out); err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: --out: %v\n", err)
		return exitInput
	}
	r, err := drive.NewRunner(cfg)
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: %v\n", err)
		return exitInput
	}
	if r.Hello().Tfjs() {
		return runFuzzTfjs(r, opts)
	}
	start := time.Now()
	prog := harness.NewProgress(opts.Progress, start)
	code, found := exitClean, 0
	_, n, err := r.Search(drive.Options{
		Seed:    opts.Seed,
		Restart: opts.Restart,
		Misuse:  opts.Misuse,
		Steps:   opts.Steps,
		More: func(n int) bool {
			prog.Update(n)
			return time.Since(start) < opts.Time
		},
		Found: func(f *drive.Finding) {
			prog.Done()
			code, found = exitViolation, found+1
			showFinding(f, opts)
		},
	})
	prog.Done()
	elapsed := time.Since(start)
	last := r.Last()
	cerr := r.Close()
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: %v\n", err)
		return max(code, exitViolation)
	}
	if found == 0 {
		fmt.Fprintf(opts.Stdout, "tlcheck fuzz: %s on %s in %s (%s), seed %d: no failure in the programs\n",
			plural.Count(n, "program"), describeDriver(r.Hello(), opts.Line), elapsed.Round(time.Millisecond), plural.Rate(float64(n)/elapsed.Seconds(), "program"), opts.Seed)
	}
	if cerr != nil { // a driver that misbehaved at the end is a finding too, and loses nothing above
		showEndTrouble(cerr, last, opts)
		code = exitViolation
	}
	for _, note := range r.Hello().Notes { // where the runtime departs from what it stands for: never silently
		fmt.Fprintf(opts.Stdout, "the driver notes: %s\n", note)
	}
	return code
}

// showEndTrouble reports a driver that misbehaved when its input ended
// (exited with a failure, hung, wrote after its last answer, left a
// process holding its stdout), with its stderr, and writes the last
// program it ran as a calls file, whose --replay ends the driver the
// same way.
func showEndTrouble(cerr error, last *drive.Result, opts Options) {
	fmt.Fprintf(opts.Stdout, "tlcheck fuzz: the driver misbehaved at the end of its input: %v\n", cerr)
	var t *drive.Trouble
	if last == nil || !errors.As(cerr, &t) {
		return
	}
	res := *last
	res.Failure = &drive.Failure{What: string(t.Kind), Call: len(res.Calls) + len(res.TensorCalls), Event: -1,
		Message: "at the end of its input, after this program: " + t.What, Stderr: t.Stderr}
	f := &drive.Finding{Result: &res, Seed: opts.Seed}
	files, err := f.Write(opts.Out, "tlcheck-drive-seed"+strconv.FormatUint(opts.Seed, 10)+"-end", opts.Line)
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: %v\n", err)
		return
	}
	fmt.Fprintf(opts.Stdout, "the last program it ran written to %s\n%s\n", files.Calls, harness.Reproduce("fuzz", "--exec", opts.Line, "--replay", files.Calls))
}

func describeDriver(h drive.Hello, line string) string {
	if h.Source != "" {
		return h.Source
	}
	return line
}

// showFinding prints a finding and writes its files.
func showFinding(f *drive.Finding, opts Options) {
	w := opts.Stdout
	fail := f.Failure()
	fmt.Fprintf(w, "tlcheck fuzz: program %d of seed %d failed on %s after %s\n",
		f.Index, f.Seed, opts.Line, f.Duration.Round(time.Millisecond))
	fmt.Fprintf(w, "%s at call %d: %s\n\n", fail.What, fail.Call, fail.Message)
	fmt.Fprintf(w, "shrunk from %s to %d (%s with the teardown) in %s:\n%s\n",
		plural.Count(f.Steps, "step"), f.Size(), plural.Count(len(f.Result.Calls)+len(f.Result.TensorCalls), "call"), plural.Count(f.Shrinks, "run"), f.Result.Listing())
	if fail.Stderr != "" || fail.Trouble() {
		fmt.Fprintf(w, "%s\n\n", drive.StderrText(fail.Stderr))
	}
	if f.Determinism != "" {
		fmt.Fprintf(w, "warning: %s\n\n", f.Determinism)
	}
	files, err := f.Write(opts.Out, "tlcheck-drive-seed"+strconv.FormatUint(f.Seed, 10), opts.Line)
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: %v\n", err)
		return
	}
	fmt.Fprintf(w, "calls written to %s\ntrace written to %s\n", files.Calls, files.Trace)
	fmt.Fprintln(w, harness.Reproduce("fuzz", "--exec", opts.Line, "--replay", files.Calls))
	if !slices.Contains(traces.Kinds(), traces.Kind(fail.What)) {
		fmt.Fprintf(w, "(a %s failure is in the driver's answers, not in its runtime's events: --replay shows it, and tlcheck replay of the trace finds only what the events show)\n", fail.What)
	}
	if files.Suppress != "" { // the violations the run found explained: replay agrees with the run
		fmt.Fprintf(w, "check the trace: tlcheck replay --suppressions %s %s\n", safetext.ShellQuote(files.Suppress), safetext.ShellQuote(files.Trace))
	} else {
		fmt.Fprintf(w, "check the trace: tlcheck replay %s\n", safetext.ShellQuote(files.Trace))
	}
}
