package drive_test

import (
	"fmt"
	"testing"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/drive/drivetest"
)

// The README's property test, against the C runtime (its fuzz target is
// drivetest's FuzzCRuntime, in a file of its own for ClusterFuzzLite).
func TestCRuntimeGoTest(t *testing.T) { drivetest.Test(t, buildCDriver(t)) }

// Test fails, with the shrunk calls, on a runtime with a fault.
func TestGoTestFails(t *testing.T) {
	bin := buildCDriver(t)
	ft := &fakeT{TB: t}
	func() {
		defer func() { recover() }() // fakeT.Fatal stops the test function as testing does
		drivetest.Test(ft, bin, "--faults=unregister-releases")
	}()
	if !ft.failed {
		t.Fatal("drivetest.Test passed a runtime with fault unregister-releases")
	}
	t.Logf("drivetest.Test failed, as it must:\n%s", ft.msg)
}

// TestTfjsGoTest: drivetest.Test, the five-line go test, over the tfjs
// driver.
func TestTfjsGoTest(t *testing.T) {
	drivetest.Test(t, drive.TfjsConfig(t).Command...)
}

// fakeT is a testing.TB whose Fatal records the failure instead.
type fakeT struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fakeT) Fatal(args ...any) {
	f.failed = true
	f.msg = fmt.Sprint(args...)
	panic("fatal")
}
