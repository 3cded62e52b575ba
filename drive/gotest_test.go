package drive_test

import (
	"fmt"
	"testing"

	"github.com/tlcheck/tlcheck/drive"
)

// The README's five lines, against the C runtime.
func TestCRuntimeGoTest(t *testing.T) { drive.Test(t, buildCDriver(t)) }

func FuzzCRuntime(f *testing.F) { drive.Fuzz(f, buildCDriver(f)) }

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
