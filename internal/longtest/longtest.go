// Package longtest splits the test suite in two: the quick suite, which
// go test ./... runs and a contributor runs many times a day, and the long
// proofs, which run only with the environment variable TLCHECK_LONG=1:
// the 2,000-program comparisons with PyTorch, the C runtime's 3,000-program
// clean run, long searches, proofs of power that run many programs. CI
// runs both (.ci/run: go test ./..., then TLCHECK_LONG=1 go test ./...).
//
// A long proof says so in its first lines, and what it proves:
//
//	longtest.Skip(t, "2,000 generated programs through PyTorch")
//
// and a test whose budget alone is long takes the long one only in the
// long step:
//
//	programs := longtest.Choose(300, 3000)
//
// The quick suite keeps every proof that each catalogued fault is caught
// (the fault catalog's self-tests, hunt's, drive's fault tests), with
// budgets that still catch every fault; the long step adds the clean runs
// and the searches that only more programs make stronger.
//
// An environment variable, not a test flag: one go test ./... passes it
// to every package, and a package that does not know it is not broken by
// it. It is for tests only, as testing/iotest is.
package longtest

import (
	"os"
	"testing"
)

// Env is the environment variable that turns the long proofs on: set to
// 1, go test runs them.
const Env = "TLCHECK_LONG"

// Enabled reports whether the long proofs run: TLCHECK_LONG is 1.
func Enabled() bool { return os.Getenv(Env) == "1" }

// Skip skips t, saying what it proves and where it runs, unless the long
// proofs are enabled. what names the long work ("2,000 programs through
// PyTorch").
func Skip(t testing.TB, what string) {
	t.Helper()
	if !Enabled() {
		t.Skipf("a long proof (%s): it runs in CI's long step, %s=1 go test ./...", what, Env)
	}
}

// Choose returns long where the long proofs are enabled, quick otherwise:
// the budget of a test that runs in both suites.
func Choose[T any](quick, long T) T {
	if Enabled() {
		return long
	}
	return quick
}
