package fuzz

// FuzzAutogradProgram's proof of power (see power_test.go), apart from the
// target in autograd_test.go.

import (
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties"
)

// checkAutograd is FuzzAutogradProgram's body: the autograd faults are
// switched on in the runtime the engine is built on.
func checkAutograd(data []byte, cfg impl.Config) error {
	return properties.RunAutogradBytes(data, cfg.Faults...)
}

// TestFuzzAutogradCatchesEveryFault: with each fault of impl.Catalog
// whose Engine is impl.EngineAutograd on, FuzzAutogradProgram's body fails
// within the budget of pseudo-random inputs.
func TestFuzzAutogradCatchesEveryFault(t *testing.T) {
	catchesEveryFault(t, impl.EngineAutograd, checkAutograd)
}

// TestFuzzAutogradPassesCorrectEngine: the same inputs, no fault: no
// failure.
func TestFuzzAutogradPassesCorrectEngine(t *testing.T) { passesCorrectRuntime(t, 500, checkAutograd) }
