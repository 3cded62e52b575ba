// Package proptest holds what the property tests of properties/ and its
// language packages share: the budgets that fix rapid's seed and checks in
// a proof of power, a flag setter that keeps them whole under -short, a
// rapid.TB that records without failing, and a silent gopter reporter.
// Tests only: it imports testing.
package proptest

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
)

// The proofs of power fix rapid's seed, as gopter's is fixed: each run
// checks the same programs, so a fault the generators reach rarely is
// caught every time or fails every time, never one CI run in ten.
const (
	RapidChecks = "1000"
	RapidSeed   = "1"
)

// SetFlag sets a registered flag (rapid's) for the rest of the test.
// rapid divides its checks by 5 and its state machines' steps by 2 under
// -short; a budget set here is what a proof of power needs to catch its
// faults, so it is kept whole in the quick suite's -short.
func SetFlag(t *testing.T, name, value string) {
	t.Helper()
	f := flag.Lookup(name)
	if f == nil {
		t.Fatalf("no flag %s", name)
	}
	if div, ok := map[string]int{"rapid.checks": 5, "rapid.steps": 2}[name]; ok && testing.Short() {
		n, err := strconv.Atoi(value)
		if err != nil {
			t.Fatalf("flag %s: %v", name, err)
		}
		value = strconv.Itoa(n * div)
	}
	old := f.Value.String()
	if err := f.Value.Set(value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Value.Set(old) })
}

// SilentTB is a rapid.TB that only records: rapid runs against it to show
// that a property fails, without failing the test that runs it.
type SilentTB struct {
	name   string
	failed bool
	out    strings.Builder
}

// NewSilentTB returns a SilentTB called name.
func NewSilentTB(name string) *SilentTB { return &SilentTB{name: name} }

func (tb *SilentTB) Helper()                         {}
func (tb *SilentTB) Name() string                    { return tb.name }
func (tb *SilentTB) Logf(format string, args ...any) { fmt.Fprintf(&tb.out, format+"\n", args...) }
func (tb *SilentTB) Log(args ...any)                 { fmt.Fprintln(&tb.out, args...) }
func (tb *SilentTB) Skipf(format string, args ...any) {
	tb.Logf("skip: "+format, args...)
}
func (tb *SilentTB) Skip(args ...any) { tb.Log(append([]any{"skip:"}, args...)...) }
func (tb *SilentTB) SkipNow()         {}
func (tb *SilentTB) Errorf(format string, args ...any) {
	tb.failed = true
	tb.Logf(format, args...)
}
func (tb *SilentTB) Error(args ...any) { tb.failed = true; tb.Log(args...) }
func (tb *SilentTB) Fatalf(format string, args ...any) {
	tb.failed = true
	tb.Logf(format, args...)
}
func (tb *SilentTB) Fatal(args ...any) { tb.failed = true; tb.Log(args...) }
func (tb *SilentTB) FailNow()          { tb.failed = true }
func (tb *SilentTB) Fail()             { tb.failed = true }
func (tb *SilentTB) Failed() bool      { return tb.failed }

// Output is what was logged.
func (tb *SilentTB) Output() string { return tb.out.String() }

// LastResult is a silent gopter reporter that keeps the result.
type LastResult struct{ Result *gopter.TestResult }

func (r *LastResult) ReportTestResult(_ string, res *gopter.TestResult) { r.Result = res }
