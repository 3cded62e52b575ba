// Package exitcode is the one home of tlcheck's exit codes, the contract
// every subcommand keeps and a SARIF log records (its invocation's
// exitCode): 0 clean, 1 a violation or counterexample found, 2 bad usage
// or unreadable input. Package check says how a run went (check.Status);
// For turns that into the code a command exits with.
package exitcode

import "github.com/tlcheck/tlcheck/check"

// The exit codes, as the contract fixes them.
const (
	Clean     = 0 // no violation
	Violation = 1 // a violation or counterexample found
	Input     = 2 // bad usage or unreadable input
)

// For returns the exit code of a status: Clean for check.Pass, Violation
// for check.Fail, and Input for check.Unreadable or any status it does
// not know, so that a run that cannot be trusted never exits clean.
func For(s check.Status) int {
	switch s {
	case check.Pass:
		return Clean
	case check.Fail:
		return Violation
	}
	return Input
}
