package properties

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/properties/harness"
)

// FlatLanguage is the flat programs' language (Program: runtime calls,
// the model as oracle) against a runtime with faults switched on (none:
// the correct one): programs drawn by Generate, run by Run, shrunk by
// Shrink. A counterexample is the shrunk run's trace, measured in
// events; a failure that does not show in its trace is Hidden, and
// Search looks on visibleGrace programs more for one that does.
func FlatLanguage(faults []impl.Fault) harness.Language[Program] {
	return flatLanguage(impl.Config{Faults: faults})
}

// flatLanguage is FlatLanguage against a runtime configured by cfg: its
// faults and its reuse order (Search takes a whole impl.Config).
func flatLanguage(cfg impl.Config) harness.Language[Program] {
	return harness.Language[Program]{
		Name: impl.EngineProgram, Unit: "events", Noun: "program", Step: "step",
		Rand:     func(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x746c636865636b)) }, // "tlcheck"
		Generate: func(r *rand.Rand, _ int) Program { return Generate(r) },
		Run: func(p Program) *harness.Failure {
			_, f := Run(p, cfg)
			return f.harness()
		},
		Grace: visibleGrace,
		Shrink: func(p Program, _ *harness.Failure) (Program, *harness.Failure) {
			small, f := Shrink(p, cfg)
			return small, f.harness()
		},
		Len:   func(p Program) int { return len(p.Steps) },
		List:  Program.String,
		Parse: flat.ParseProgram,
		Counterexample: func(_ Program, f *harness.Failure) (string, int) {
			var b bytes.Buffer
			_ = f.Trace(&b) // a bytes.Buffer takes every write
			return b.String(), f.Events
		},
		Against: "the runtime", Label: "runtime",
	}
}

// harness is f as the harness's Failure, nil for nil: its notes are the
// violations its trace shows that the program does not explain, what
// `tlcheck replay` of the trace will point at.
func (f *Failure) harness() *harness.Failure {
	if f == nil {
		return nil
	}
	var notes strings.Builder
	for _, v := range f.Result.Unexplained() {
		fmt.Fprintf(&notes, "the trace shows: %s at event %d: %s\n", v.Kind, v.Event, v.Message)
	}
	notes.WriteByte('\n')
	return &harness.Failure{
		Property: f.Property,
		Also:     slices.DeleteFunc(slices.Clone(f.Broken), func(p string) bool { return p == f.Property }),
		Message:  strings.TrimRight(f.Error(), "\n"),
		Call:     f.Call, Events: f.Events(), Notes: notes.String(),
		Hidden: !f.Result.Visible(), Trace: f.WriteTrace, Detail: f,
	}
}
