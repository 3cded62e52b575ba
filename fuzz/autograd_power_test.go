package fuzz

// FuzzAutogradProgram's proof of power (see power_test.go), apart from the
// target in autograd_test.go.

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl/autograd"
	"github.com/tlcheck/tlcheck/properties"
)

// TestFuzzAutogradCatchesEveryFault: with each fault of the autograd
// engine's catalog on, FuzzAutogradProgram's body fails within the budget
// of pseudo-random inputs; with none, it passes them.
func TestFuzzAutogradCatchesEveryFault(t *testing.T) {
	for _, fi := range autograd.Catalog() {
		t.Run(string(fi.Name), func(t *testing.T) {
			next := randomInputs(1)
			for i := range faultBudget {
				if err := properties.RunAutogradBytes(next(), fi.Name); err != nil {
					t.Logf("caught by input %d: %v", i, strings.SplitN(err.Error(), "\n", 2)[0])
					return
				}
			}
			t.Errorf("fault %s escaped %d fuzz inputs", fi.Name, faultBudget)
		})
	}
	next := randomInputs(2)
	for range 500 {
		if err := properties.RunAutogradBytes(next()); err != nil {
			t.Fatalf("the correct engine fails: %v", err)
		}
	}
}
