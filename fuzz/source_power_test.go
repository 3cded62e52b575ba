package fuzz

// FuzzSource's proof of power and benchmark (see power_test.go), apart
// from the target in source_test.go.

import (
	"testing"

	"github.com/tlcheck/tlcheck/impl"
)

// TestFuzzSourceCatchesEveryCodegenFault: with each codegen fault on, and
// each runtime fault source programs catch too (the planner's and the
// arena's), FuzzSource's check fails within the budget.
func TestFuzzSourceCatchesEveryCodegenFault(t *testing.T) {
	catchesEveryFault(t, impl.EngineSource, checkSource)
}

// TestFuzzSourcePassesCorrectRuntime: the same inputs, no fault: no failure.
func TestFuzzSourcePassesCorrectRuntime(t *testing.T) { passesCorrectRuntime(t, 1000, checkSource) }

// BenchmarkFuzzSource measures the fuzz body, in programs per second.
func BenchmarkFuzzSource(b *testing.B) { benchmarkBody(b, checkSource) }
