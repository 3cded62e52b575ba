package drive_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/impl"
)

func TestImplDriverClean(t *testing.T) {
	r, err := drive.NewRunner(testDriver("impl", hangTimeout))
	if err != nil {
		t.Fatal(err)
	}
	found, n, err := r.Search(drive.Options{Seed: 1, More: func(n int) bool { return n < 300 }})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatalf("the Go runtime without faults failed program %d of %d:\n%v\n%s", found[0].Index, n, found[0].Failure(), found[0].Result.Listing())
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// notOverThePipe are impl's program faults the protocol cannot reach, by
// design (PROTOCOL.md, Decisions): frames are planned by tlcheck, as a
// compiler plans them, so the runtime's planner is never asked; and a
// method's frame is an fn_enter like a function's.
var notOverThePipe = map[impl.Fault]string{
	impl.FaultPlannerSharesOverlapping: "the planner is tlcheck's, not the driver's",
	impl.FaultMethodWithoutFrame:       "the protocol has no method calls",
}

// TestImplDriverFaults: every fault of impl's runtime that generated
// programs hunt in process is caught over the pipe too, behind impldriver.
func TestImplDriverFaults(t *testing.T) {
	for _, f := range impl.Catalog() {
		if f.Engine != impl.EngineProgram || notOverThePipe[f.Name] != "" {
			continue
		}
		t.Run(string(f.Name), func(t *testing.T) {
			r, err := drive.NewRunner(testDriver("impl:"+string(f.Name), hangTimeout))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			start := time.Now()
			found, n, err := r.Search(drive.Options{Seed: 1, More: func(int) bool { return time.Since(start) < 10*time.Second }})
			if err != nil {
				t.Fatal(err)
			}
			if len(found) == 0 {
				t.Fatalf("not caught in %d programs (10 s)", n)
			}
			if !strings.Contains(found[0].Failure().Stderr, "impldriver: serving") {
				t.Errorf("the finding does not show the driver's stderr: %q", found[0].Failure().Stderr)
			}
			// The C runtime's faults are held to the 8 calls
			// (TestCRuntimeFaults). impl's runtime states its counts, so a
			// fault often first shows as a count-mismatch at a release,
			// and shrinking keeps that kind at that op: one more step
			// (unregister-oldest-record: 9) than the free it led to.
			if steps := len(found[0].Program.Steps); steps > 9 {
				t.Errorf("shrunk to %d steps, want at most 9: %v\n%s", steps, found[0].Failure(), found[0].Result.Listing())
			}
		})
	}
}
