package fuzz

// FuzzProgram's proof of power and benchmark (see power_test.go), apart
// from the target in program_test.go.

import (
	"testing"

	"github.com/tlcheck/tlcheck/impl"
)

// TestFuzzBodyCatchesEveryFault: with each program fault of the catalog
// on, FuzzProgram's check fails within the budget.
func TestFuzzBodyCatchesEveryFault(t *testing.T) {
	catchesEveryFault(t, impl.EngineProgram, checkProgram)
}

// TestFuzzBodyPassesCorrectRuntime: the same inputs, no fault: no failure.
func TestFuzzBodyPassesCorrectRuntime(t *testing.T) { passesCorrectRuntime(t, 500, checkProgram) }

// BenchmarkFuzzProgram measures the fuzz body, in programs per second.
func BenchmarkFuzzProgram(b *testing.B) { benchmarkBody(b, checkProgram) }
