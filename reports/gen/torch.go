package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/internal/python"
	"github.com/tlcheck/tlcheck/traces"
)

// The PyTorch report (issue 20): the model held to real PyTorch, program
// by program, over the PyTorch driver (examples/torchdriver). It writes
// reports/torch.md from two runs:
//
//   - the comparison itself, run here through package drive: generated
//     layer-5 programs sent to the driver, every answer checked against the
//     model; what agreed, by kind, and the driver's throughput;
//   - TestTorchCatchesWrongModel and TestTorchCatchesFaultyDriver in
//     ./drive: a wrong rule of the model and a driver that misreports, each
//     caught and shrunk.

func writeTorchReport(out string, programs int, seed uint64, driveTest string) error {
	py, err := python.Find("torch")
	if err != nil {
		return err
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	m := describeMachine()
	p("# The model against real PyTorch")
	p("")
	p("Written by `go run ./reports/gen -only torch` on %s; regenerate it, never edit it.", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	p("")
	p("Machine: %s, %s cores, %s; %s. Load average at the start: %s.", m.CPU, m.Cores, m.Memory, m.Go, m.Load)
	p("On a shared machine wall times vary.")

	step("comparing %d programs with PyTorch", programs)
	r, err := drive.NewRunner(drive.Config{Command: []string{py, filepath.Join("examples", "torchdriver", "driver.py")},
		CallTimeout: 20 * time.Second, StartTimeout: time.Minute})
	if err != nil {
		return err
	}
	hello := r.Hello()
	rng := rand.New(rand.NewPCG(seed, 0x746c35)) // drive's stream for layer-5 searches
	var (
		n, calls, refused, unjudged int
		kinds                       = map[traces.Kind]int{}
		failures                    = map[string]int{}
		firstFailure                string
		diverged                    int
	)
	generated := 0
	start := time.Now()
	err = r.StreamTensor(func() ([]drive.TensorCall, bool) {
		if generated == programs {
			return nil, false
		}
		generated++
		return drive.GenerateTensorProgram(rng), true
	}, func(res *drive.Result) bool {
		n++
		calls += len(res.TensorCalls)
		for _, o := range res.Outcomes {
			if !o.Refused {
				continue
			}
			refused++
			if len(o.Kinds) == 0 {
				unjudged++
			}
			for _, k := range o.Kinds {
				kinds[k]++
			}
			if strings.Contains(o.Message, "the two PyTorch worlds diverged") {
				diverged++
			}
		}
		if f := res.Failure; f != nil {
			failures[f.What]++
			if firstFailure == "" {
				firstFailure = fmt.Sprintf("program %d: %v\n%s", n, f, res.Listing())
			}
		}
		return true
	})
	took := time.Since(start)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	agreed := n
	for _, c := range failures {
		agreed -= c
	}
	p("")
	p("## Programs compared")
	p("")
	p("%d generated autograd programs (`drive.GenerateTensorProgram`, seed %d: leaves of shapes [], [1], [3],", n, seed)
	p("[2,3], [1,3], [3,1] ..., every op, views, in-place ops with and without no_grad, detach, .data,")
	p("backward with and without retain_graph, zero_grad, retain_grad, drop), %d calls, run in %s", calls, hello.Source)
	p("by `examples/torchdriver/driver.py`, each answer checked against the model as it came.")
	p("")
	p("| | |")
	p("|---|---|")
	p("| programs in which the model agreed with PyTorch at every call | %d of %d |", agreed, n)
	p("| calls PyTorch refused | %d |", refused)
	for _, k := range []traces.Kind{traces.SavedModified, traces.Misuse, traces.UseAfterFree} {
		p("| ... as `%s`, the model reporting `%s` at that call | %d |", k, k, kinds[k])
	}
	p("| ... of other kinds (shapes, overlap, non-scalar backward, 0-dim slice, ...), the model silent | %d |", unjudged)
	p("| refusals where the driver's two PyTorch worlds diverged (a driver bug) | %d |", diverged)
	if len(failures) > 0 {
		var ks []string
		for k, c := range failures {
			ks = append(ks, fmt.Sprintf("%s %d", k, c))
		}
		slices.Sort(ks)
		p("| programs where they disagreed, by the failure's kind | %s |", strings.Join(ks, ", "))
	}
	p("")
	p("## Throughput of the PyTorch driver")
	p("")
	p("Every call runs twice in the driver (PyTorch without hooks, the truth, and with saved-tensor")
	p("hooks, the observer), over the pipe, with the model's check in tlcheck: %.1f programs/s,", float64(n)/took.Seconds())
	p("%.0f calls/s (%d programs, %d calls in %s, one driver process, two programs in flight).", float64(calls)/took.Seconds(), n, calls, took.Round(100*time.Millisecond))
	if len(hello.Notes) > 0 {
		p("")
		p("## What the driver notes")
		p("")
		p("Its hello lists where the PyTorch it runs differs from the current release (it answers as the")
		p("current release would) and what it does about PyTorch's own ways:")
		p("")
		for _, note := range hello.Notes {
			p("- %s", note)
		}
	}
	if firstFailure != "" {
		p("")
		p("The first disagreement:")
		p("")
		p("```")
		p("%s", strings.TrimSpace(firstFailure))
		p("```")
	}

	step("catching a wrong model and a faulty driver")
	cmd := command("go", "test", "-run", "^TestTorchCatches", "-v", "-count", "1", "./drive")
	if driveTest != "" {
		// A machine without Go (the accelerator machine, whose PyTorch
		// is the current release) runs drive's tests built elsewhere.
		abs, err := filepath.Abs(driveTest)
		if err != nil {
			return err
		}
		cmd = command(abs, "-test.run", "^TestTorchCatches", "-test.v", "-test.count", "1")
		cmd.Dir = "drive"
	}
	res, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, res)
	}
	p("")
	p("## Every check can fail")
	p("")
	p("`go test -run TestTorchCatches -v ./drive`: a wrong rule of the model (put between the model and")
	p("the check by a test-only seam of package drive: model/ is untouched) and a PyTorch driver that")
	p("misreports (its `--fault` flags), each against PyTorch until a program fails, then shrunk on the driver.")
	p("")
	p("| what is wrong | caught at program | failure | shrunk from calls | to calls | shrink runs |")
	p("|---|---|---|---|---|---|")
	line := regexp.MustCompile(`(?m)^\s+torch_test.go:\d+: (.+?): program (\d+): (\S+) at call \d+: .*\n\s+shrunk from (\d+) calls to (\d+) in (\d+) runs`)
	rows := 0
	for _, mm := range line.FindAllSubmatch(res, -1) {
		p("| %s | %s | `%s` | %s | %s | %s |", mm[1], mm[2], mm[3], mm[4], mm[5], mm[6])
		rows++
	}
	if rows == 0 {
		return fmt.Errorf("no finding lines in the test's output:\n%s", res)
	}
	return atomicfile.Replace(out, b.Bytes())
}
