package execfuzz

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/internal/plural"
	"github.com/tlcheck/tlcheck/properties/harness"
)

// A driver whose hello lists the "tfjs" programs (examples/tfjsdriver) is
// searched with tfjs programs and replays their calls files
// (drive/PROTOCOL.md, "tfjs programs"); everything else about fuzz --exec
// is as for the other drivers.

// runFuzzTfjs searches the tfjs driver r for opts.Time: searches of one
// seed after another from opts.Seed, each stopping at its first finding,
// which is shrunk, shown and written to --out; without --restart the first
// finding ends the run.
func runFuzzTfjs(r *drive.Runner, opts Options) harness.Outcome {
	start := time.Now()
	prog := harness.NewProgress(opts.Progress, start)
	code, total := exitClean, 0
	more := func(int) bool { return time.Since(start) < opts.Time }
	for seed := opts.Seed; more(0); seed++ {
		f, n, err := r.SearchTfjs(drive.Options{Seed: seed, More: func(k int) bool {
			prog.Update(total + k)
			return more(k)
		}}, drive.TfjsGenOptions{})
		total += n
		if err != nil {
			prog.Done()
			r.Close()
			fmt.Fprintf(opts.Stderr, "tlcheck fuzz: %v\n", err)
			return exitViolation
		}
		if f == nil {
			continue
		}
		prog.Done()
		code = exitViolation
		showTfjsFinding(f, opts)
		if !opts.Restart {
			break
		}
	}
	prog.Done()
	elapsed := time.Since(start)
	r.Close()
	if code == exitClean {
		fmt.Fprintf(opts.Stdout, "tlcheck fuzz: %s on %s in %s (%s), seed %d: no failure\n",
			plural.Count(total, "tfjs program"), describeDriver(r.Hello(), opts.Line), elapsed.Round(time.Millisecond), plural.Rate(float64(total)/elapsed.Seconds(), "program"), opts.Seed)
	}
	for _, note := range r.Hello().Notes { // where the runtime departs from what it stands for: never silently
		fmt.Fprintf(opts.Stdout, "the driver notes: %s\n", note)
	}
	return code
}

func showTfjsFinding(f *drive.TfjsFinding, opts Options) {
	w := opts.Stdout
	fail := f.Result.Failure
	fmt.Fprintf(w, "tlcheck fuzz: tfjs program %d of seed %d failed on %s after %s\n",
		f.Index, f.Seed, opts.Line, f.Duration.Round(time.Millisecond))
	fmt.Fprintf(w, "%s at call %d: %s\n\n", fail.What, fail.Call, fail.Message)
	var b bytes.Buffer
	_ = drive.WriteTfjsCalls(&b, f.Result.Calls)
	fmt.Fprintf(w, "shrunk from %s to %d in %s:\n%s\n", plural.Count(f.Steps, "call"), len(f.Result.Calls), plural.Count(f.Shrinks, "run"), b.String())
	if fail.Stderr != "" {
		fmt.Fprintf(w, "the driver's last stderr:\n%s\n\n", strings.TrimRight(fail.Stderr, "\n"))
	}
	path, err := f.Write(opts.Out, "tlcheck-drive-tfjs-seed"+strconv.FormatUint(f.Seed, 10), opts.Line)
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: %v\n", err)
		return
	}
	fmt.Fprintf(w, "calls written to %s\n%s\n", path, harness.Reproduce("fuzz", "--exec", opts.Line, "--replay", path))
}

// replayTfjs runs a calls file of a tfjs program once on r and reports.
func replayTfjs(r *drive.Runner, prog *replayProgram, opts Options) harness.Outcome {
	calls, err := prog.fcalls, prog.errF
	var res *drive.TfjsResult
	if err == nil {
		res, err = r.RunTfjs(calls)
	}
	r.Close()
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: --replay %s: %v\n", opts.Replay, err)
		return exitInput
	}
	if fail := res.Failure; fail != nil {
		fmt.Fprintf(opts.Stdout, "%s at call %d (%s): %s\n", fail.What, fail.Call, calls[min(fail.Call, len(calls)-1)].Op, fail.Message)
		if fail.Stderr != "" {
			fmt.Fprintf(opts.Stdout, "the driver's last stderr:\n%s\n", strings.TrimRight(fail.Stderr, "\n"))
		}
		return exitViolation
	}
	fmt.Fprintf(opts.Stdout, "%s replayed on %s: no failure\n", plural.Count(len(calls), "call"), describeDriver(r.Hello(), opts.Line))
	return exitClean
}
