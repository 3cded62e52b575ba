// Command gen measures tlcheck's replay and writes reports/replay.md.
//
// Run it from the repository root:
//
//	go run ./reports/gen
//
// It makes a large real glibc mtrace log (CPython with PYTHONMALLOC=malloc
// running an allocation-heavy loop, about 4M events), replays it with
// glibc's mtrace script and with tlcheck replay --from mtrace, timing both
// and measuring their peak memory, checks that the two print the same leak
// list, runs the JSON Lines benchmarks (BenchmarkJSONL in cmd/tlcheck), and
// writes the figures as ratios, with the machine they came from, to
// reports/replay.md (atomically: a temporary file renamed into place).
// Then it replays a generated trace of 2 million leaks three ways and
// writes reports/leaks.md. -only leaks writes that report alone (it needs
// no more than Go); -only benches runs the runtime layers' benchmarks,
// then times FuzzProgram as a user runs it beside the fuzzing engine alone
// and the body alone (-fuzz-rounds, -fuzz-time; fuzzspeed.go), and
// writes reports/benchmarks.md; -only drive measures driving a runtime in
// another process (package drive, examples/cruntime) and writes
// reports/drive.md; -only torch holds the model to real PyTorch over the
// PyTorch driver (examples/torchdriver) and writes reports/torch.md;
// -only readers times the snapshot and
// mtrace readers against Python's pickle.load and glibc's script and writes
// reports/readers.md; -only cuda replays the caching allocator's programs
// recorded on a real GPU (impl/gpu/testdata/cuda) on impl/gpu and writes
// reports/cuda.md (it needs no more than Go); -only page measures the HTML export of
// generated snapshots in a headless Chromium and writes reports/page.md
// and page.svg; -only suspects runs the
// leak-suspect detector and the what-if replays on generated training
// loops and writes reports/suspects.md (it needs no more than Go); -only detection hunts every fault of the catalog, as
// tlcheck selftest does, and writes reports/detection.md, which the full
// run writes last; -only testtime times the README's test command and
// CI's long step, package by package, and writes reports/testtime.md
// (testtime.go). -baseline REV builds tlcheck as it was at
// a git revision and times it in the same runs as the working tree's, the
// two taking turns, and the report adds the ratios.
//
// It needs Linux, gcc, glibc's libc_malloc_debug.so.0 and mtrace script,
// and python3; it is never run by go test. The report is regenerated, never
// edited by hand.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

func main() {
	out := flag.String("out", filepath.Join("reports", "replay.md"), "report to write")
	iterations := flag.Int("iterations", 290, "rounds of the Python workload (about 13k log lines each)")
	runs := flag.Int("runs", 3, "timed runs of each checker; the report gives the median")
	benchCount := flag.Int("benchcount", 5, "go test -count for the JSON Lines benchmarks")
	keep := flag.Bool("keep", false, "keep the work directory (the log and outputs)")
	pgo := flag.Bool("pgo", true, "profile tlcheck on the log first and write "+pgoPath+", then time the rebuilt tlcheck")
	only := flag.String("only", "", `"replay": write only replay.md (and default.pgo); "leaks": only the leak-scale report; "benches": only the layers' benchmarks; "readers": only the readers' report; "detection": only the fault detection report; "drive": only drive.md; "cuda": only cuda.md; "suspects": only suspects.md; "torch": only torch.md; "page": only page.md (and page.svg); "testtime": only testtime.md`)
	readersOut := flag.String("readers-out", filepath.Join("reports", "readers.md"), "the readers' report to write")
	snapshots := flag.String("snapshots", defaultSnapshots, "the readers' report: entries of each snapshot to time (12 frames each, about 525 bytes an entry)")
	detectionOut := flag.String("detection-out", filepath.Join("reports", "detection.md"), "fault detection report to write")
	detectionTime := flag.Duration("detection-time", 10*time.Second, "the budget per fault of the detection report")
	driveOut := flag.String("drive-out", filepath.Join("reports", "drive.md"), "the drive report to write")
	suspectsOut := flag.String("suspects-out", filepath.Join("reports", "suspects.md"), "the report of leak suspects and what-if replays on generated loops to write")
	cudaOut := flag.String("cuda-out", filepath.Join("reports", "cuda.md"), "the report of the caching allocator against a real GPU to write")
	driveClean := flag.Duration("drive-clean", time.Minute, "how long the C driver runs clean for the drive report")
	torchOut := flag.String("torch-out", filepath.Join("reports", "torch.md"), "the PyTorch report to write")
	torchPrograms := flag.Int("torch-programs", 2000, "generated programs the PyTorch report compares")
	driveTest := flag.String("drive-test", "", "for the PyTorch report on a machine without Go: drive's tests, built by go test -c ./drive, run in place of go test")
	fuzzRounds := flag.Int("fuzz-rounds", 3, "-only benches: rounds of FuzzProgram's speed as a user sees it (0: none)")
	fuzzTime := flag.Duration("fuzz-time", time.Minute, "-only benches: how long each go test -fuzz run of those rounds lasts")
	benchesOut := flag.String("benches-out", filepath.Join("reports", "benchmarks.md"), "the layers' benchmarks report to write")
	leaksOut := flag.String("leaks-out", filepath.Join("reports", "leaks.md"), "leak-scale report to write")
	leaks := flag.Int("leaks", 2_000_000, "leaked blocks in the leak-scale trace")
	base := flag.String("baseline", "", "a git revision whose tlcheck is timed in the same runs as the working tree's (the report gives the ratios)")
	pageOut := flag.String("page-out", filepath.Join("reports", "page.md"), "the HTML page report to write (its figure beside it, .svg)")
	pageSizes := flag.String("page-sizes", defaultPageSizes, "the page report: entries of each snapshot")
	testTimeOut := flag.String("testtime-out", filepath.Join("reports", "testtime.md"), "the test suite's cost report to write")
	flag.Parse()
	if *only == "testtime" {
		if err := writeTestTime(*testTimeOut); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	if *only == "page" {
		if err := writePageReport(*pageOut, strings.TrimSuffix(*pageOut, ".md")+".svg", *pageSizes, *runs); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	if *only != "" && *only != "replay" && *only != "leaks" && *only != "benches" && *only != "readers" && *only != "detection" && *only != "drive" && *only != "cuda" && *only != "suspects" && *only != "torch" {
		fmt.Fprintln(os.Stderr, `gen: -only takes "replay", "leaks", "benches", "readers", "detection", "drive", "cuda", "suspects", "torch", "page" or "testtime"`)
		os.Exit(2)
	}
	if *only == "torch" {
		if err := writeTorchReport(*torchOut, *torchPrograms, 1, *driveTest); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	if *only == "detection" {
		if err := writeDetection(*detectionOut, *detectionTime, 1); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	if *only == "cuda" {
		if err := writeCUDAReport(*cudaOut); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	if *only == "suspects" {
		if err := writeSuspectsReport(*suspectsOut); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	if *only == "drive" {
		if err := writeDriveReport(*driveOut, 3, *driveClean); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	if *only == "benches" {
		if err := writeLayerBenches(*benchesOut, 3, *fuzzRounds, *fuzzTime); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		return
	}
	if err := generate(*out, *leaksOut, *readersOut, *snapshots, *only, *base, *iterations, *runs, *benchCount, *leaks, *keep, *pgo); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if *only == "" {
		if err := writeDetection(*detectionOut, *detectionTime, 1); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}

// figures is everything the report states.
type figures struct {
	When       time.Time
	Machine    machine
	Workload   string
	LogBytes   int64
	LogLines   int
	Events     int
	Script     timing // glibc's mtrace script
	Tlcheck    timing // tlcheck replay --from mtrace --json
	Runs       int
	Leaks      leakCompare
	Bench      benchResult
	BenchCount int
	// The model's memory for each live block: tlcheck on a log of
	// liveBlocks mallocs then their frees (Live), and on a log of one
	// line (One), whose peak RSS is the process's own.
	Live, One timing
	// The baseline (-baseline), nil without one, and its figures from the
	// same runs.
	Base              *baseline
	BaseTime          timing
	BaseBench         benchResult
	BaseLive, BaseOne timing
	// LoadAfter is the load average once the runs are done.
	LoadAfter string
}

func generate(out, leaksOut, readersOut, snapshots, only, base string, iterations, runs, benchCount, leaks int, keep, pgo bool) error {
	if _, err := os.Stat("go.mod"); err != nil {
		return fmt.Errorf("run from the repository root: %w", err)
	}
	work, err := os.MkdirTemp("", "tlcheck-report-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "gen: work directory", work)
	} else {
		defer os.RemoveAll(work)
	}
	f := figures{When: time.Now().UTC(), Machine: describeMachine(), BenchCount: benchCount, Runs: runs}

	step("building tlcheck and the mtrace shim")
	tlcheck := filepath.Join(work, "tlcheck")
	if err := command("go", "build", "-o", tlcheck, "./cmd/tlcheck").Run(); err != nil {
		return fmt.Errorf("building tlcheck: %w", err)
	}
	if only == "leaks" {
		return writeLeakScale(tlcheck, work, leaksOut, leaks, runs)
	}
	if only == "readers" {
		return writeReaders(tlcheck, work, readersOut, runs, iterations, snapshots)
	}
	log, err := f.makeLog(work, iterations)
	if err != nil {
		return err
	}

	if pgo {
		step("profiling tlcheck for %s, and rebuilding it", pgoPath)
		if err := writePGO(tlcheck, log, work); err != nil {
			return err
		}
		if err := command("go", "build", "-o", tlcheck, "./cmd/tlcheck").Run(); err != nil {
			return fmt.Errorf("rebuilding tlcheck: %w", err)
		}
	}

	if base != "" {
		step("building the baseline, %s", base)
		if f.Base, err = buildBaseline(base, work); err != nil {
			return err
		}
	}

	jobs := onLog(tlcheck, work, log)
	if f.Base != nil {
		jobs = append(jobs, job{filepath.Join(work, "baseline.json"), f.Base.tlcheck, jobs[1].args})
	}
	ts, err := f.timeLog(jobs...)
	if err != nil {
		return err
	}
	if f.Base != nil {
		f.BaseTime = ts[2]
	}

	if err := f.timeLive(tlcheck, work); err != nil {
		return err
	}

	step("comparing the leak lists")
	if f.Leaks, f.Events, err = compareLeaks(log, jobs[0].out, jobs[1].out); err != nil {
		return err
	}

	step("running BenchmarkJSONL (-count %d)", benchCount)
	bins := []string{filepath.Join(work, "bench")}
	if err := buildBench(".", bins[0]); err != nil {
		return fmt.Errorf("building the benchmark: %w", err)
	}
	if f.Base != nil {
		bins = append(bins, f.Base.bench)
	}
	bs, err := benchJSONL(benchCount, bins...)
	if err != nil {
		return err
	}
	f.Bench = bs[0]
	if f.Base != nil {
		f.BaseBench = bs[1]
	}

	f.LoadAfter = loadAverage()
	step("writing %s", out)
	if err := atomicfile.Replace(out, render(f)); err != nil {
		return err
	}
	if only == "replay" {
		return nil
	}
	return writeLeakScale(tlcheck, work, leaksOut, leaks, runs)
}

// timeLive times tlcheck, and the baseline's beside it, on a log of
// liveBlocks live blocks and on a log of one line, taking turns, for the
// peak RSS each live block costs (see writeLiveLog).
func (f *figures) timeLive(tlcheck, work string) error {
	live, one := filepath.Join(work, "live.mtrace"), filepath.Join(work, "one.mtrace")
	step("timing tlcheck on a log of %d live blocks", liveBlocks)
	if err := writeLiveLog(live, liveBlocks); err != nil {
		return err
	}
	defer os.Remove(live)
	if err := os.WriteFile(one, []byte("= Start\n"), 0o644); err != nil {
		return err
	}
	on := func(bin, name, log string) job {
		return job{filepath.Join(work, name), bin, []string{"replay", "--from", "mtrace", "--json", log}}
	}
	jobs := []job{on(tlcheck, "live.json", live), on(tlcheck, "one.json", one)}
	if f.Base != nil {
		jobs = append(jobs, on(f.Base.tlcheck, "live-base.json", live), on(f.Base.tlcheck, "one-base.json", one))
	}
	ts, err := timeInterleaved(f.Runs, jobs...)
	if err != nil {
		return err
	}
	f.Live, f.One = ts[0], ts[1]
	if f.Base != nil {
		f.BaseLive, f.BaseOne = ts[2], ts[3]
	}
	return nil
}

// perLiveBlock is the peak RSS each live block costs: live's peak less
// one's (the process's own), over liveBlocks.
func perLiveBlock(live, one timing) float64 {
	return float64(live.MaxRSS-one.MaxRSS) / liveBlocks
}

// makeLog makes the CPython mtrace log in work, which replay.md and
// readers.md time glibc's script and tlcheck on, describes it in f and
// returns its path.
func (f *figures) makeLog(work string, iterations int) (string, error) {
	preload, err := buildShim(work)
	if err != nil {
		return "", err
	}
	step("making the log: CPython, %d rounds", iterations)
	log := filepath.Join(work, "python.mtrace")
	if f.Workload, err = pythonLog(preload, log, iterations); err != nil {
		return "", err
	}
	f.LogBytes, f.LogLines, err = sizeOf(log)
	return log, err
}

// onLog returns the jobs to time on the log: glibc's mtrace script, then
// tlcheck replay --from mtrace --json, their outputs in work.
func onLog(tlcheck, work, log string) []job {
	return []job{
		{filepath.Join(work, "mtrace.out"), "mtrace", []string{log}},
		{filepath.Join(work, "tlcheck.json"), tlcheck, []string{"replay", "--from", "mtrace", "--json", log}},
	}
}

// timeLog times jobs, onLog's first, in f.Runs interleaved runs, and
// keeps the script's and tlcheck's timings in f.
func (f *figures) timeLog(jobs ...job) ([]timing, error) {
	step("timing glibc's mtrace script and tlcheck on %d lines (%d runs each, interleaved)", f.LogLines, f.Runs)
	ts, err := timeInterleaved(f.Runs, jobs...)
	if err != nil {
		return nil, err
	}
	f.Script, f.Tlcheck = ts[0], ts[1]
	return ts, nil
}

func step(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gen: "+format+"\n", args...)
}
