package fuzz

// FuzzProgram's tests and benchmark live here, apart from the target in
// program_test.go: OSS-Fuzz's libFuzzer build (.clusterfuzzlite/build.sh)
// compiles the target's file alone, against a testing package of its own
// that has no testing.B, so that file holds the target and its check only.

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
)

// faultBudget is how many pseudo-random inputs the fuzz body gets to catch
// each fault in TestFuzzBodyCatchesEveryFault.
const faultBudget = 5000

// randomInputs returns a source of deterministic pseudo-random fuzz
// inputs, 4 to 127 bytes long: what an unguided fuzzer might try.
func randomInputs(seed uint64) func() []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	return func() []byte {
		b := make([]byte, 4+r.IntN(124))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
}

// TestFuzzBodyCatchesEveryFault is the fuzz target's proof of power: with
// each fault of the catalog on, the body's check fails within a modest
// budget of pseudo-random inputs, which is no more than the fuzzing
// engine's own unguided start.
func TestFuzzBodyCatchesEveryFault(t *testing.T) {
	for _, fi := range impl.Catalog() {
		if fi.Engine != impl.EngineProgram {
			continue // another engine's fault: programs cannot reach it
		}
		t.Run(string(fi.Name), func(t *testing.T) {
			cfg := impl.Config{Faults: []impl.Fault{fi.Name}}
			next := randomInputs(1)
			for i := range faultBudget {
				if err := checkProgram(next(), cfg); err != nil {
					t.Logf("caught by input %d: %v", i, strings.SplitN(err.Error(), "\n", 2)[0])
					return
				}
			}
			t.Errorf("fault %s escaped %d fuzz inputs\ntrigger: %s", fi.Name, faultBudget, fi.Trigger)
		})
	}
}

// TestFuzzBodyPassesCorrectRuntime: the same inputs, no fault: no failure.
func TestFuzzBodyPassesCorrectRuntime(t *testing.T) {
	next := randomInputs(2)
	for range 500 {
		if err := checkProgram(next(), impl.Config{}); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkFuzzProgram measures the fuzz body on pseudo-random inputs, in
// programs per second.
func BenchmarkFuzzProgram(b *testing.B) {
	next := randomInputs(3)
	inputs := make([][]byte, 256)
	for i := range inputs {
		inputs[i] = next()
	}
	n := 0
	for b.Loop() {
		if err := checkProgram(inputs[n%len(inputs)], impl.Config{}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "programs/s")
}
