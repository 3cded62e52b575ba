package source

import (
	"strings"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/lang"
	"github.com/tlcheck/tlcheck/internal/proptest"
)

// rapidSourceProperty: a program rapid draws, lowered onto a runtime
// configured by cfg, keeps both source properties.
func rapidSourceProperty(cfg impl.Config) func(*rapid.T) {
	return func(t *rapid.T) {
		p := lang.Generate(func(n int) int { return rapid.IntRange(0, n-1).Draw(t, "choice") })
		f, err := Run(p, cfg)
		if err != nil {
			t.Fatalf("ill-formed generated program: %v\n%s", err, p)
		}
		if f != nil {
			t.Fatalf("%v\nprogram:\n%s", f, p)
		}
	}
}

// gopterSourceRun states the same property with gopter, over the bytes a
// program is generated from.
func gopterSourceRun(cfg impl.Config, seed int64, tests int) (bool, *gopter.TestResult) {
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = tests
	params.MaxSize = 120
	params.MaxShrinkCount = 100
	props := gopter.NewProperties(params)
	props.Property("lowering refines the interpreter", prop.ForAll(func(data []uint8) bool {
		f, err := Run(lang.Generate(lang.Bytes(data)), cfg)
		return err == nil && f == nil
	}, gen.SliceOf(gen.UInt8())))
	rep := &proptest.LastResult{}
	ok := props.Run(rep)
	return ok, rep.Result
}

func TestRapidSource(t *testing.T) {
	rapid.Check(t, rapidSourceProperty(impl.Config{}))
}

func TestGopterSource(t *testing.T) {
	if ok, res := gopterSourceRun(impl.Config{}, 1, 300); !ok {
		var b strings.Builder
		gopter.NewFormatedReporter(true, 160, &b).ReportTestResult("lowering refines the interpreter", res)
		t.Fatal(b.String())
	}
}

func TestSearchSourceCorrect(t *testing.T) {
	if p, f, n := search(nil, 2, func(n int) bool { return n < 2000 }); f != nil {
		t.Fatalf("program %d: %v\n%s", n, f, p)
	}
}

// Budgets of the codegen faults' proof of power.
const (
	sourceHunt        = 3000 // programs Search may run per fault
	maxShrunkSource   = 10   // statements in a shrunk counterexample
	sourceGopterTests = 1000
	// A runtime fault that source programs catch too needs a program
	// that reuses a slot just so: gopter's short inputs make few. So does
	// the lowering's own slot fault (slotGopterFaults).
	alsoGopterTests = 3000
)

// slotGopterFaults are the codegen faults that, like the runtime faults
// source programs catch too, show only in a slot reused just so: gopter
// gets alsoGopterTests inputs to find them.
var slotGopterFaults = map[impl.Fault]bool{lang.FaultLoopLifeEndsFirstLoop: true}

// TestEveryCodegenFaultIsCaught is the proof of power of the source
// properties: each codegen fault, alone, fails the rapid property, the
// gopter property and a search, whose counterexample shrinks to a few
// statements that pass without the fault. So does each runtime fault the
// catalog says source programs catch too (FaultInfo.Also): the planner's
// and the arena's, which source programs reach through the slots their
// tensor variables keep from statement to statement.
func TestEveryCodegenFaultIsCaught(t *testing.T) {
	proptest.SetFlag(t, "rapid.nofailfile", "true")
	proptest.SetFlag(t, "rapid.seed", proptest.RapidSeed)
	proptest.SetFlag(t, "rapid.checks", proptest.RapidChecks)
	proptest.SetFlag(t, "rapid.shrinktime", "100ms")
	n := 0
	for _, fi := range impl.Catalog() {
		if !fi.CaughtBy(impl.EngineSource) {
			continue
		}
		n++
		cfg := impl.Config{Faults: []impl.Fault{fi.Name}}
		t.Run(string(fi.Name), func(t *testing.T) {
			t.Run("rapid", func(t *testing.T) {
				tb := proptest.NewSilentTB(t.Name())
				rapid.Check(tb, rapidSourceProperty(cfg))
				if !tb.Failed() {
					t.Errorf("fault %s escaped the rapid source property\ntrigger: %s", fi.Name, fi.Trigger)
				}
			})
			t.Run("gopter", func(t *testing.T) {
				tests := sourceGopterTests
				if fi.Engine != impl.EngineSource || slotGopterFaults[fi.Name] {
					tests = alsoGopterTests
				}
				if ok, _ := gopterSourceRun(cfg, 1, tests); ok {
					t.Errorf("fault %s escaped the gopter source property\ntrigger: %s", fi.Name, fi.Trigger)
				}
			})
			t.Run("hunt", func(t *testing.T) {
				p, f, n := search(cfg.Faults, 1, func(n int) bool { return n < sourceHunt })
				if f == nil {
					t.Fatalf("fault %s escaped %d programs\ntrigger: %s", fi.Name, n, fi.Trigger)
				}
				small, sf := Shrink(p, cfg)
				if sf == nil {
					t.Fatalf("the shrunk program no longer fails:\n%s", small)
				}
				if g, err := Run(small, impl.Config{}); err != nil || g != nil {
					t.Errorf("the counterexample fails without the fault (%v, %v):\n%s", g, err, small)
				}
				if c := lang.Statements(small); c > maxShrunkSource {
					t.Errorf("shrunk program has %d statements, want at most %d:\n%s", c, maxShrunkSource, small)
				}
				t.Logf("caught after %d programs by %s; shrunk to %d statements, %d events:\n%s", n, sf.Property, lang.Statements(small), sf.Events(), small)
			})
		})
	}
	if n == 0 {
		t.Fatal("the catalog has no codegen fault")
	}
}
