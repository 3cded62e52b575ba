package source

import (
	"fmt"
	"math/rand/v2"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/lang"
	"github.com/tlcheck/tlcheck/properties/harness"
)

// PropWellFormed is the property a generated program that is not well
// formed breaks: the generator's bug, shown as a failure of its own.
const PropWellFormed = "source-well-formed"

// Language is the source programs' language with faults switched on in
// the lowering and the runtime (none: the correct ones): programs of
// impl/lang drawn by lang.Generate, run by Run, shrunk by Shrink,
// measured in statements. A failing program is saved beside its trace,
// as a .tl file that `tlcheck fuzz --replay` checks again.
func Language(faults []impl.Fault) harness.Language[*lang.Program] {
	cfg := impl.Config{Faults: faults}
	return harness.Language[*lang.Program]{
		Name: impl.EngineSource, Unit: "statements", Noun: "source program", Step: "statement",
		Rand: func(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6c616e67)) }, // "lang"
		Generate: func(r *rand.Rand, _ int) *lang.Program {
			return lang.Generate(func(k int) int { return r.IntN(k) })
		},
		Run: func(p *lang.Program) *harness.Failure {
			f, err := Run(p, cfg)
			if err != nil {
				f = &Failure{Program: p, Property: PropWellFormed, Message: err.Error()}
			}
			return f.harness()
		},
		Shrink: func(p *lang.Program, _ *harness.Failure) (*lang.Program, *harness.Failure) {
			small, f := Shrink(p, cfg)
			return small, f.harness()
		},
		Len:  lang.Statements,
		List: (*lang.Program).String,
		// A saved program that Run cannot take (not well formed, or
		// beyond what the runtime has room for) is no program to check:
		// refused with Run's error, which names the function and
		// statement.
		Parse: func(text string) (*lang.Program, error) {
			p, err := lang.Parse(text)
			if err == nil {
				_, err = Run(p, cfg)
			}
			return p, err
		},
		Counterexample: func(p *lang.Program, _ *harness.Failure) (string, int) { return p.String(), lang.Statements(p) },
		Against:        "the lowering and the runtime", Label: "source", Ext: ".tl",
		Head: func(seed uint64, fault, property string) string {
			withFault := ""
			if fault != "" {
				withFault = " --fault " + fault
			}
			// The program says how it was found and how to check it again.
			return fmt.Sprintf("// Found by tlcheck fuzz --source --seed %d%s: %s.\n// Check it again, lowered by the code of today: tlcheck fuzz --replay THIS_FILE%s\n",
				seed, withFault, property, withFault)
		},
		Again: func(path, fault string) []string {
			if fault != "" {
				return []string{"fuzz", "--replay", path, "--fault", fault}
			}
			return []string{"fuzz", "--replay", path}
		},
	}
}

// harness is f as the harness's Failure; nil for nil.
func (f *Failure) harness() *harness.Failure {
	if f == nil {
		return nil
	}
	return &harness.Failure{Property: f.Property, Message: f.Message, Call: -1, Events: f.Events(), Trace: f.WriteTrace, Detail: f}
}
