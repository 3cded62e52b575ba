package fuzz

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties"
)

// FuzzProgram decodes bytes into a program (properties.Decode: ops and
// operands chosen by modulo over what is alive, so most mutations stay
// meaningful programs) and runs it against the correct runtime with the
// model as oracle. A failure is shrunk and reported with its trace, ready
// to save as a file for tlcheck replay.
func FuzzProgram(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := checkProgram(data, impl.Config{}); err != nil {
			t.Fatal(err)
		}
	})
}

// checkProgram is FuzzProgram's body: nil if the program data decodes to
// passes every property against cfg, else the shrunk failure with its
// trace as JSON Lines.
func checkProgram(data []byte, cfg impl.Config) error {
	p := properties.Decode(data)
	if _, f := properties.Run(p, cfg); f == nil {
		return nil
	}
	small, f := properties.Shrink(p, cfg)
	var trace strings.Builder
	if err := f.WriteTrace(&trace); err != nil {
		return fmt.Errorf("%v (and its trace could not be written: %v)", f, err)
	}
	return fmt.Errorf("%v\nshrunk program:\n%vtrace (save it to a file and run tlcheck replay on it):\n%s", f, small, trace.String())
}

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
		if fi.Layer != impl.LayerRuntime {
			continue // the compiler's: TestFuzzSourceCatchesEveryCodegenFault
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
