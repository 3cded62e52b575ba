package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

// The drive report (issue 19): what driving a runtime in another process
// costs and catches. It writes reports/drive.md from three runs:
//
//   - BenchmarkDriveRatios and BenchmarkDrive{InProcess,GoDriver,CDriver}
//     in ./drive: the same generated programs in process, over the pipe to
//     impl's runtime (impldriver) and over the pipe to the C runtime, with
//     the ratios of time per program measured in one run;
//   - TestCRuntimeFaults: each fault of examples/cruntime caught, how fast,
//     shrunk to how many calls;
//   - tlcheck fuzz --exec on the C driver without faults for a minute.

func writeDriveReport(out string, count int, clean time.Duration) error {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	m := describeMachine()
	p("# Driving a runtime in another process")
	p("")
	p("Written by `go run ./reports/gen -only drive` on %s; regenerate it, never edit it.", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	p("")
	p("Machine: %s, %s cores, %s; %s. Load average at the start: %s.", m.CPU, m.Cores, m.Memory, m.Go, m.Load)
	p("On a shared machine wall times vary; the ratios, measured in turn in one run, much less.")

	step("running the drive benchmarks")
	res, err := command("go", "test", "-run", "^$", "-bench", "^BenchmarkDrive", "-benchtime", "3000x",
		"-count", strconv.Itoa(count), "./drive").Output()
	if err != nil {
		return fmt.Errorf("go test -bench ./drive: %w", err)
	}
	p("")
	p("## The protocol's cost")
	p("")
	p("`go test -run '^$' -bench '^BenchmarkDrive' -benchtime 3000x -count %d ./drive`. The same 1024", count)
	p("generated programs, checked by the same model: `InProcess` runs each with `properties.Run`")
	p("against impl's runtime; `GoDriver` sends each to impl's runtime behind `drive/impldriver`")
	p("in another process, `CDriver` to examples/cruntime (layer-2 calls only), each with one")
	p("persistent process and two programs in flight. `Ratios` runs the three in turn, 32")
	p("programs at a time, and reports time per program over the pipe against in process.")
	p("Targets: the C driver at 2,000 programs/s or more, the Go driver within 3x of in process.")
	p("")
	p("```")
	for _, l := range regexp.MustCompile(`(?m)^Benchmark\S*\s.*$`).FindAll(res, -1) {
		p("%s", l)
	}
	p("```")

	step("catching the C runtime's faults")
	res, err = command("go", "test", "-run", "^TestCRuntimeFaults$", "-v", "-count", "1", "./drive").Output()
	if err != nil {
		return fmt.Errorf("go test -run TestCRuntimeFaults ./drive: %w\n%s", err, res)
	}
	p("")
	p("## The C runtime's faults")
	p("")
	p("`go test -run TestCRuntimeFaults -v ./drive`: each fault of examples/cruntime on alone, programs")
	p("from seed 1 until one fails (at most 10 s), then shrunk on the driver. Time is to the failing")
	p("program, shrinking excluded; steps are the program's, calls add the teardown and end.")
	p("Targets: each caught in under 10 s, median under 1 s, at most 8 calls.")
	p("")
	p("| fault | programs | time | shrunk steps (calls) | shrink runs | failure |")
	p("|---|---|---|---|---|---|")
	line := regexp.MustCompile(`=== RUN   TestCRuntimeFaults/(\S+)\n\s+cruntime_test.go:\d+: caught at program (\d+) after (\S+), shrunk from \d+ to (\d+) steps \((\d+) calls with teardown\) in (\d+) runs: (\S+) at`)
	rows := 0
	for _, m := range line.FindAllSubmatch(res, -1) {
		p("| `%s` | %s | %s | %s (%s) | %s | %s |", m[1], m[2], m[3], m[4], m[5], m[6], m[7])
		rows++
	}
	if rows == 0 {
		return fmt.Errorf("no fault lines in the test's output:\n%s", res)
	}
	if med := regexp.MustCompile(`time to catch: median (\S+), max (\S+)`).FindSubmatch(res); med != nil {
		p("")
		p("Median time to catch %s, max %s.", med[1], med[2])
	}

	step("running the C driver clean for %v", clean)
	work, err := os.MkdirTemp("", "tlcheck-drive-report-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	tl, drv := filepath.Join(work, "tlcheck"), filepath.Join(work, "tlrt-driver")
	if err := command("go", "build", "-o", tl, "./cmd/tlcheck").Run(); err != nil {
		return fmt.Errorf("building tlcheck: %w", err)
	}
	if err := command("gcc", "-O2", "-o", drv, "examples/cruntime/tlrt.c", "examples/cruntime/driver.c").Run(); err != nil {
		return fmt.Errorf("building the C driver: %w", err)
	}
	res, err = command(tl, "fuzz", "--exec", drv, "--time", clean.String(), "--seed", "1").Output()
	if err != nil {
		return fmt.Errorf("tlcheck fuzz --exec (clean): %w\n%s", err, res)
	}
	p("")
	p("## The C runtime without faults")
	p("")
	p("`tlcheck fuzz --exec ./tlrt-driver --time %v --seed 1`:", clean)
	p("")
	p("```")
	p("%s", bytes.ReplaceAll(bytes.TrimSpace(res), []byte(drv), []byte("./tlrt-driver")))
	p("```")
	return atomicfile.Replace(out, b.Bytes())
}
