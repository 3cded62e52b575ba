package drive_test

import (
	"fmt"
	"testing"

	"github.com/tlcheck/tlcheck/drive"
)

// The README's property test, against the C runtime (its fuzz target is
// FuzzCRuntime, in a file of its own for ClusterFuzzLite).
func TestCRuntimeGoTest(t *testing.T) { drive.Test(t, buildCDriver(t)) }

// Test fails, with the shrunk calls, on a runtime with a fault.
func TestGoTestFails(t *testing.T) {
	bin := buildCDriver(t)
	ft := &fakeT{TB: t}
	func() {
		defer func() { recover() }() // fakeT.Fatal stops the test function as testing does
		drive.Test(ft, bin, "--faults=unregister-releases")
	}()
	if !ft.failed {
		t.Fatal("drive.Test passed a runtime with fault unregister-releases")
	}
	t.Logf("drive.Test failed, as it must:\n%s", ft.msg)
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
