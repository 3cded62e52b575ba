package drive

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

// TestTfjsReport measures the tfjs driver's throughput and writes
// reports/tfjs.md (run by hand: it is skipped unless TLCHECK_TFJS_REPORT
// names the file to write, and TLCHECK_TFJS_REPORT_PROGRAMS may say how
// many programs, default 5000):
//
//	TLCHECK_TFJS_REPORT=$PWD/reports/tfjs.md go test -run TestTfjsReport -count=1 ./drive
//
// It runs the clean search (seed 1, two programs in flight, one driver) and
// states the wall time and the CPU time of each side, tlcheck's (this
// process) and the driver's (node), per program: on a machine shared with
// other work the wall time says little, the CPU times what a free core
// would do.
func TestTfjsReport(t *testing.T) {
	out := os.Getenv("TLCHECK_TFJS_REPORT")
	if out == "" {
		t.Skip("set TLCHECK_TFJS_REPORT to the report to write (reports/tfjs.md)")
	}
	programs := 5000
	if s := os.Getenv("TLCHECK_TFJS_REPORT_PROGRAMS"); s != "" {
		fmt.Sscan(s, &programs)
	}
	r := tfjsRunner(t)
	load := loadAvg()
	// The driver's start (loading tfjs, about 2 s of CPU) is not the
	// programs': run one first, then measure from there.
	if _, _, err := r.SearchTfjs(Options{Seed: 99, More: func(k int) bool { return k < 1 }}, TfjsGenOptions{}); err != nil {
		t.Fatal(err)
	}
	startSelf := selfCPU()
	startDriver := procCPU(r.d.cmd.Process.Pid)
	start := time.Now()
	f, n, err := r.SearchTfjs(Options{Seed: 1, More: func(k int) bool { return k < programs }}, TfjsGenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f != nil {
		t.Fatalf("real tfjs failed: %v", f.Result.Failure)
	}
	wall := time.Since(start)
	self := selfCPU() - startSelf
	driver := procCPU(r.d.cmd.Process.Pid) - startDriver
	if driver <= 0 {
		t.Fatal("no CPU time of the driver: /proc/PID/stat unreadable")
	}
	per := func(d time.Duration) string {
		return fmt.Sprintf("%.2f ms", d.Seconds()*1000/float64(n))
	}
	rate := func(d time.Duration) float64 { return float64(n) / d.Seconds() }
	bound := min(rate(self), rate(driver))
	var b strings.Builder
	fmt.Fprintf(&b, "# The TensorFlow.js driver's throughput\n\n")
	fmt.Fprintf(&b, "Written by `TLCHECK_TFJS_REPORT=$PWD/reports/tfjs.md go test -run TestTfjsReport -count=1 ./drive` on %s; regenerate it, never edit it.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "Machine: %s, %d cores; %s %s/%s; %s. Load average at the start: %s.\n\n",
		cpuModel(), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, nodeVersion(), load)
	fmt.Fprintf(&b, "%d generated tfjs programs (seed 1, the clean search: `TfjsGenOptions{}`), one driver "+
		"(`node examples/tfjsdriver`, tfjs-core 4.22.0 on its CPU backend), two programs in flight, every answer "+
		"checked by the model and `end`'s `memory` held to zero. The driver's start (loading tfjs) is left out.\n\n", n)
	fmt.Fprintf(&b, "| | per program | programs/s |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| wall time | %s | %.0f |\n", per(wall), rate(wall))
	fmt.Fprintf(&b, "| CPU, the driver (node: tfjs and the observer) | %s | %.0f |\n", per(driver), rate(driver))
	fmt.Fprintf(&b, "| CPU, tlcheck (generate, send, parse, model) | %s | %.0f |\n", per(self), rate(self))
	fmt.Fprintf(&b, "\nWith a free core for each side (two programs in flight let them work at once), one driver "+
		"runs at most %.0f programs/s, the slower side's rate. The target is 1,000 programs/s.\n", bound)
	// The same programs on a driver per core at once (SearchTfjsParallel).
	workers := runtime.NumCPU()
	pstart := time.Now()
	pf, pn, err := SearchTfjsParallel(tfjsConfig(t), workers, Options{Seed: 1, More: func(k int) bool { return k < programs }}, TfjsGenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pf != nil {
		t.Fatalf("real tfjs failed: %v", pf.Result.Failure)
	}
	pwall := time.Since(pstart) // the drivers' starts included
	fmt.Fprintf(&b, "\nOn %d drivers at once (`SearchTfjsParallel`, a driver per core), the same %d programs took %v wall time, "+
		"the drivers' starts included: %.0f programs/s.\n", workers, pn, pwall.Round(time.Millisecond), float64(pn)/pwall.Seconds())
	if err := atomicfile.Replace(out, []byte(b.String())); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d programs: wall %v (%.0f/s), driver CPU %v (%.0f/s), tlcheck CPU %v (%.0f/s)",
		n, wall.Round(time.Millisecond), rate(wall), driver.Round(time.Millisecond), rate(driver), self.Round(time.Millisecond), rate(self))
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is the user and system CPU time of process pid (Linux).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	var ut, st int64
	fmt.Sscan(f[11], &ut)
	fmt.Sscan(f[12], &st)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / hz
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func nodeVersion() string {
	b, err := exec.Command("node", "--version").Output()
	if err != nil {
		return "node unknown"
	}
	return "node " + strings.TrimSpace(string(b))
}
