package main

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

// The layers' benchmarks: what each runtime layer added since the model
// was first measured costs, as its benchmarks measure it, each against a
// baseline run in the same process (the benchmarks report the ratios as
// metrics). It writes reports/benchmarks.md.

// layerBench is one package's benchmarks and why they are there.
type layerBench struct {
	pkg, pattern, what string
}

var layerBenches = []layerBench{
	{"./impl", "^Benchmark(ArenaGet|Frame|PlanFrame|AllocRelease|AcquireRelease|MapInsertDelete)$",
		"Arena frames and the planner (issue 8): arena_get against make([]byte, n), frame enter and exit, the planner at 100, 1000 and 10000 variables (time per n log n); the runtime core against a Go map."},
	{"./fuzz", "^BenchmarkFuzz(Program|Source)$",
		"The fuzz bodies (issue 8): programs checked per second, flat runtime programs and source programs."},
	{"./properties", "^BenchmarkRun$", "One generated program run end to end (runtime, model after every call; a failing run's trace round trip, which these passing runs skip)."},
	{"./impl/gpu", ".", "The GPU pool (issue 10): hit rate and reserved/allocated on a training-like workload, malloc+free against a Go map."},
	{"./impl/registry", ".", "The sharded registry (issue 10): throughput with 1, 2, 4, 8 goroutines, sharded against one lock."},
	{"./impl/autograd", ".", "Autograd (issue 9): one training step, its allocations, backward over forward."},
}

// writeLayerBenches runs each package's benchmarks count times and writes
// their result lines to out, then FuzzProgram's speed as a user sees it
// (fuzzspeed.go): fuzzRounds rounds, each go test -fuzz run lasting
// fuzzTime; no such section for fuzzRounds 0.
func writeLayerBenches(out string, count, fuzzRounds int, fuzzTime time.Duration) error {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	m := describeMachine()
	p("# The layers' benchmarks")
	p("")
	p("Written by `go run ./reports/gen -only benches` on %s; regenerate it, never edit it.", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	p("Each block is `go test -run '^$' -bench PATTERN -count %d PACKAGE` as it printed its results; the ratios", count)
	p("are metrics the benchmarks compute against a baseline in the same process. On a shared machine wall")
	p("times vary; ratios much less.")
	p("")
	p("Machine: %s, %s cores, %s; %s. Load average at the start: %s.", m.CPU, m.Cores, m.Memory, m.Go, m.Load)
	line := regexp.MustCompile(`(?m)^Benchmark\S*\s.*$`)
	for _, lb := range layerBenches {
		step("running the benchmarks of %s", lb.pkg)
		cmd := command("go", "test", "-run", "^$", "-bench", lb.pattern, "-count", strconv.Itoa(count), lb.pkg)
		res, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("go test -bench %s: %w", lb.pkg, err)
		}
		p("")
		p("## %s", lb.pkg)
		p("")
		p("%s", lb.what)
		p("")
		p("```")
		for _, l := range line.FindAll(res, -1) {
			p("%s", l)
		}
		p("```")
	}
	if fuzzRounds > 0 {
		work, err := os.MkdirTemp("", "tlcheck-fuzzspeed")
		if err != nil {
			return err
		}
		defer os.RemoveAll(work)
		fs, err := measureFuzzSpeed(work, fuzzRounds, fuzzTime)
		if err != nil {
			return err
		}
		writeFuzzSpeed(p, fs, fuzzRounds)
	}
	return atomicfile.Replace(out, b.Bytes())
}
