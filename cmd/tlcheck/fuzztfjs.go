package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/internal/plural"
)

// A driver whose hello lists the "tfjs" programs (examples/tfjsdriver) is
// searched with tfjs programs and replays their calls files
// (drive/PROTOCOL.md, "tfjs programs"); everything else about fuzz --exec
// is as for the other drivers.

// runFuzzTfjs searches the tfjs driver r for opts.time: searches of one
// seed after another from opts.seed, each stopping at its first finding,
// which is shrunk, shown and written to --out; without --restart the first
// finding ends the run.
func runFuzzTfjs(e *env, r *drive.Runner, opts fuzzExecOptions) int {
	start := time.Now()
	prog := newProgress(e, start)
	code, total := exitClean, 0
	more := func(int) bool { return time.Since(start) < opts.time }
	for seed := opts.seed; more(0); seed++ {
		f, n, err := r.SearchTfjs(drive.Options{Seed: seed, More: func(k int) bool {
			prog.update(total + k)
			return more(k)
		}}, drive.TfjsGenOptions{})
		total += n
		if err != nil {
			prog.done()
			r.Close()
			fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
			return exitViolation
		}
		if f == nil {
			continue
		}
		prog.done()
		code = exitViolation
		showTfjsFinding(e, f, opts)
		if !opts.restart {
			break
		}
	}
	prog.done()
	elapsed := time.Since(start)
	r.Close()
	if code == exitClean {
		fmt.Fprintf(e.stdout, "tlcheck fuzz: %s on %s in %s (%s), seed %d: no failure\n",
			plural.Count(total, "tfjs program"), describeDriver(r.Hello(), opts.line), elapsed.Round(time.Millisecond), plural.Rate(float64(total)/elapsed.Seconds(), "program"), opts.seed)
	}
	for _, note := range r.Hello().Notes { // where the runtime departs from what it stands for: never silently
		fmt.Fprintf(e.stdout, "the driver notes: %s\n", note)
	}
	return code
}

func showTfjsFinding(e *env, f *drive.TfjsFinding, opts fuzzExecOptions) {
	w := e.stdout
	fail := f.Result.Failure
	fmt.Fprintf(w, "tlcheck fuzz: tfjs program %d of seed %d failed on %s after %s\n",
		f.Index, f.Seed, opts.line, f.Duration.Round(time.Millisecond))
	fmt.Fprintf(w, "%s at call %d: %s\n\n", fail.What, fail.Call, fail.Message)
	var b bytes.Buffer
	_ = drive.WriteTfjsCalls(&b, f.Result.Calls)
	fmt.Fprintf(w, "shrunk from %s to %d in %s:\n%s\n", plural.Count(f.Steps, "call"), len(f.Result.Calls), plural.Count(f.Shrinks, "run"), b.String())
	if fail.Stderr != "" {
		fmt.Fprintf(w, "the driver's last stderr:\n%s\n\n", strings.TrimRight(fail.Stderr, "\n"))
	}
	path, err := f.Write(opts.out, "tlcheck-drive-tfjs-seed"+strconv.FormatUint(f.Seed, 10), opts.line)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
		return
	}
	fmt.Fprintf(w, "calls written to %s\nreproduce: tlcheck fuzz --exec %s --replay %s\n", path, shellQuote(opts.line), shellQuote(path))
}

// replayTfjs runs a calls file of a tfjs program once on r and reports.
func replayTfjs(e *env, r *drive.Runner, prog *replayProgram, opts fuzzExecOptions) int {
	calls, err := prog.fcalls, prog.errF
	var res *drive.TfjsResult
	if err == nil {
		res, err = r.RunTfjs(calls)
	}
	r.Close()
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --replay %s: %v\n", opts.replay, err)
		return exitInput
	}
	if fail := res.Failure; fail != nil {
		fmt.Fprintf(e.stdout, "%s at call %d (%s): %s\n", fail.What, fail.Call, calls[min(fail.Call, len(calls)-1)].Op, fail.Message)
		if fail.Stderr != "" {
			fmt.Fprintf(e.stdout, "the driver's last stderr:\n%s\n", strings.TrimRight(fail.Stderr, "\n"))
		}
		return exitViolation
	}
	fmt.Fprintf(e.stdout, "%s replayed on %s: no failure\n", plural.Count(len(calls), "call"), describeDriver(r.Hello(), opts.line))
	return exitClean
}
