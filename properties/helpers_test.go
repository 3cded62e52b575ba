package properties

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// traceText returns a run's trace as JSON Lines, for failure messages.
func traceText(r *Result) string {
	var b strings.Builder
	if err := writeTrace(&b, r.Header, r.Trace); err != nil {
		return "(trace not written: " + err.Error() + ")"
	}
	return b.String()
}

// setFlag sets a registered flag (rapid's) for the rest of the test.
func setFlag(t *testing.T, name, value string) {
	t.Helper()
	f := flag.Lookup(name)
	if f == nil {
		t.Fatalf("no flag %s", name)
	}
	// rapid divides its checks by 5 and its state machines' steps by 2
	// under -short; a budget set here is what a proof of power needs to
	// catch its faults, so it is kept whole in the quick suite's -short.
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

// silentTB is a rapid.TB that only records: rapid runs against it to show
// that a property fails, without failing the test that runs it.
type silentTB struct {
	name   string
	failed bool
	out    strings.Builder
}

func (tb *silentTB) Helper()                         {}
func (tb *silentTB) Name() string                    { return tb.name }
func (tb *silentTB) Logf(format string, args ...any) { fmt.Fprintf(&tb.out, format+"\n", args...) }
func (tb *silentTB) Log(args ...any)                 { fmt.Fprintln(&tb.out, args...) }
func (tb *silentTB) Skipf(format string, args ...any) {
	tb.Logf("skip: "+format, args...)
}
func (tb *silentTB) Skip(args ...any) { tb.Log(append([]any{"skip:"}, args...)...) }
func (tb *silentTB) SkipNow()         {}
func (tb *silentTB) Errorf(format string, args ...any) {
	tb.failed = true
	tb.Logf(format, args...)
}
func (tb *silentTB) Error(args ...any) { tb.failed = true; tb.Log(args...) }
func (tb *silentTB) Fatalf(format string, args ...any) {
	tb.failed = true
	tb.Logf(format, args...)
}
func (tb *silentTB) Fatal(args ...any) { tb.failed = true; tb.Log(args...) }
func (tb *silentTB) FailNow()          { tb.failed = true }
func (tb *silentTB) Fail()             { tb.failed = true }
func (tb *silentTB) Failed() bool      { return tb.failed }
