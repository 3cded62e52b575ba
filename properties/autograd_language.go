package properties

import (
	"math/rand/v2"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/harness"
)

// AutogradLanguage is the autograd programs' language (AutogradProgram on
// an impl/autograd engine, checked by the autograd property) over a
// runtime with faults switched on (none: the correct one): programs drawn
// by GenerateAutograd, run by RunAutograd, shrunk by ShrinkAutograd,
// measured in steps. A failure's Kind is the kind of the model's first
// violation, for a breach of Model.
func AutogradLanguage(faults []impl.Fault) harness.Language[AutogradProgram] {
	return harness.Language[AutogradProgram]{
		Name: impl.EngineAutograd, Unit: "steps", Noun: "autograd program", Step: "step",
		Rand:     func(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d)) },
		Generate: func(r *rand.Rand, _ int) AutogradProgram { return GenerateAutograd(r) },
		Run:      func(p AutogradProgram) *harness.Failure { return RunAutograd(p, faults).harness() },
		Shrink: func(p AutogradProgram, _ *harness.Failure) (AutogradProgram, *harness.Failure) {
			small, f := ShrinkAutograd(p, faults)
			return small, f.harness()
		},
		Len:            AutogradProgram.Len,
		List:           AutogradProgram.String,
		Counterexample: func(p AutogradProgram, _ *harness.Failure) (string, int) { return p.String(), p.Len() },
		Against:        "the autograd engine", Label: "autograd",
	}
}

// harness is f as the harness's Failure; nil for nil.
func (f *AutogradFailure) harness() *harness.Failure {
	if f == nil {
		return nil
	}
	return &harness.Failure{Property: f.Property, Kind: string(f.Kind), Message: f.Message, Call: f.Step,
		Events: f.Events(), Trace: f.WriteTrace, Detail: f}
}
