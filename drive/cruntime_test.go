package drive_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/internal/longtest"
)

// cFaults are the faults examples/cruntime carries, by their catalog names.
var cFaults = []string{
	"stale-record-not-purged", "unregister-releases", "unregister-oldest-record",
	"struct-init-no-acquire", "struct-death-no-field-release", "param-register-no-acquire",
	"param-reregister-no-release-old", "release-ignores-zero", "zst-allocates",
	"scope-exit-oldest-first", "u8-count",
}

// cLongFaults are the C runtime's faults that only long programs show,
// with the steps their counterexample may keep: u8-count needs its 256
// references.
var cLongFaults = map[string]int{"u8-count": 300}

// buildCDriver builds examples/cruntime's driver with the C compiler,
// once per test process, or skips the test where there is none.
func buildCDriver(t testing.TB) string {
	t.Helper()
	cBuild.Do(func() {
		cc := os.Getenv("CC")
		if cc == "" {
			cc = "gcc"
		}
		if _, err := exec.LookPath(cc); err != nil {
			cBuild.skip = fmt.Sprintf("no C compiler (%s): %v", cc, err)
			return
		}
		src := filepath.Join("..", "examples", "cruntime")
		bin := filepath.Join(buildDir, "tlrt-driver")
		out, err := exec.Command(cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-o", bin,
			filepath.Join(src, "tlrt.c"), filepath.Join(src, "driver.c")).CombinedOutput()
		if err != nil {
			cBuild.err = fmt.Sprintf("building the C driver: %v\n%s", err, out)
			return
		}
		cBuild.bin = bin
	})
	switch {
	case cBuild.skip != "":
		t.Skip(cBuild.skip)
	case cBuild.err != "":
		t.Fatal(cBuild.err)
	}
	return cBuild.bin
}

var cBuild struct {
	sync.Once
	bin, skip, err string
}

func cDriver(bin string, faults string) drive.Config {
	return drive.Config{Command: []string{bin, "--faults=" + faults}, CallTimeout: hangTimeout}
}

// TestCRuntimeClean: the C runtime without faults passes generated
// programs: 3,000 in CI's long step (package longtest), 300 in the quick
// suite (a minute of them for the report: see reports/gen).
func TestCRuntimeClean(t *testing.T) {
	bin := buildCDriver(t)
	r, err := drive.NewRunner(cDriver(bin, ""))
	if err != nil {
		t.Fatal(err)
	}
	programs := longtest.Choose(300, 3000)
	found, n, err := r.Search(drive.Options{Seed: 7, More: func(n int) bool { return n < programs }})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		f := found[0]
		t.Fatalf("the C runtime without faults failed program %d of %d: %v\n%s\nstderr: %s", f.Index, n, f.Failure(), f.Result.Listing(), f.Failure().Stderr)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCRuntimeFaults: every fault of the C runtime is caught, within
// 10 s, and shrunk to at most 8 calls.
func TestCRuntimeFaults(t *testing.T) {
	bin := buildCDriver(t)
	var times []time.Duration
	for _, fault := range cFaults {
		t.Run(fault, func(t *testing.T) {
			r, err := drive.NewRunner(cDriver(bin, fault))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			start := time.Now()
			deadline := start.Add(10 * time.Second)
			found, n, err := r.Search(drive.Options{Seed: 1, More: func(int) bool { return time.Now().Before(deadline) }})
			if err != nil {
				t.Fatal(err)
			}
			if len(found) == 0 {
				t.Fatalf("not caught in %d programs (10 s)", n)
			}
			f := found[0]
			times = append(times, f.Duration)
			t.Logf("caught at program %d after %v, shrunk from %d to %d steps (%d calls with teardown) in %d runs: %v",
				n, f.Duration.Round(time.Millisecond), f.Steps, len(f.Program.Steps), len(f.Result.Calls), f.Shrinks, f.Failure())
			limit := 8
			if n, ok := cLongFaults[fault]; ok {
				limit = n
			}
			if got := len(f.Program.Steps); got > limit {
				t.Errorf("counterexample of %d steps, want at most %d:\n%s", got, limit, f.Result.Listing())
			}
		})
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	if len(times) > 0 {
		t.Logf("time to catch: median %v, max %v", times[len(times)/2], times[len(times)-1])
	}
}
