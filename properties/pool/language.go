package pool

import (
	"math/rand/v2"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/harness"
)

// Language is the pool programs' language with faults switched on in the
// allocators (none: the correct ones): programs drawn caching and
// persistent in turn, run by Run, shrunk by Shrink, measured in calls.
func Language(faults []impl.Fault) harness.Language[Program] {
	return harness.Language[Program]{
		Name: impl.EnginePool, Unit: "calls", Noun: "pool program", Step: "call",
		Rand:     func(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) },
		Generate: func(r *rand.Rand, n int) Program { return Generate(r, n%2 == 1) },
		Run:      func(p Program) *harness.Failure { return Run(p, faults).harness() },
		Shrink: func(p Program, _ *harness.Failure) (Program, *harness.Failure) {
			small, f := Shrink(p, faults)
			return small, f.harness()
		},
		Len:            func(p Program) int { return len(p.Ops) },
		List:           Program.String,
		Counterexample: func(p Program, _ *harness.Failure) (string, int) { return p.String(), len(p.Ops) },
		Against:        "the GPU allocators", Label: "pool",
	}
}

// harness is f as the harness's Failure; nil for nil.
func (f *Failure) harness() *harness.Failure {
	if f == nil {
		return nil
	}
	return &harness.Failure{Property: f.Property, Message: f.Message, Call: f.Step, Events: f.Events(), Trace: f.WriteTrace, Detail: f}
}
