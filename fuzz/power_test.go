package fuzz

// The proof of power every fuzz body owes, written once: with each fault
// its engine hunts switched on, the body's check fails within a modest
// budget of pseudo-random inputs, no more than a fuzzing engine's own
// unguided start; with none, it passes them. A target's tests live apart
// from its file: OSS-Fuzz's libFuzzer build (.clusterfuzzlite/build.sh)
// compiles a target's file alone, against a testing package of its own
// that has no testing.B, so that file holds the target and its check only.

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
)

// faultBudget is how many pseudo-random inputs a fuzz body gets to catch
// each fault.
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

// bodyCheck is a fuzz body: nil for input it passes under cfg, else the
// failure.
type bodyCheck func(data []byte, cfg impl.Config) error

// catchesEveryFault runs check, with each fault engine catches (its own,
// and those it catches too: FaultInfo.Also) on in turn, on faultBudget
// inputs, and fails for a fault no input caught.
func catchesEveryFault(t *testing.T, engine string, check bodyCheck) {
	for _, fi := range impl.Catalog() {
		if !fi.CaughtBy(engine) {
			continue // another engine's fault: this body cannot reach it
		}
		t.Run(string(fi.Name), func(t *testing.T) {
			cfg := impl.Config{Faults: []impl.Fault{fi.Name}}
			next := randomInputs(1)
			for i := range faultBudget {
				if err := check(next(), cfg); err != nil {
					t.Logf("caught by input %d: %v", i, strings.SplitN(err.Error(), "\n", 2)[0])
					return
				}
			}
			t.Errorf("fault %s escaped %d fuzz inputs\ntrigger: %s", fi.Name, faultBudget, fi.Trigger)
		})
	}
}

// passesCorrectRuntime runs check on n inputs with no fault on: none may
// fail.
func passesCorrectRuntime(t *testing.T, n int, check bodyCheck) {
	next := randomInputs(2)
	for range n {
		if err := check(next(), impl.Config{}); err != nil {
			t.Fatal(err)
		}
	}
}

// benchmarkBody measures check on pseudo-random inputs, in programs per
// second.
func benchmarkBody(b *testing.B, check bodyCheck) {
	next := randomInputs(3)
	inputs := make([][]byte, 256)
	for i := range inputs {
		inputs[i] = next()
	}
	n := 0
	for b.Loop() {
		if err := check(inputs[n%len(inputs)], impl.Config{}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "programs/s")
}
