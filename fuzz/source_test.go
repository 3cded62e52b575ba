package fuzz

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/lang"
	"github.com/tlcheck/tlcheck/properties"
)

// FuzzSource generates a source program from bytes (lang.Generate over
// lang.Bytes: every input is a well-formed program), lowers it onto the
// correct runtime and checks the source properties: the trace replays
// clean on the model, and after every statement the runtime's live
// objects are those the interpreter says are alive. A failure is shrunk
// on the source and reported as the program beside its trace.
func FuzzSource(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x03\x00\x01\x02\x0b\x05\x07\x01\x00\x02\x03\x09\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := checkSource(data, impl.Config{}); err != nil {
			t.Fatal(err)
		}
	})
}

// checkSource is FuzzSource's body: nil if the program data generates
// keeps the source properties against cfg, else the shrunk program and
// its trace.
func checkSource(data []byte, cfg impl.Config) error {
	p := lang.Generate(lang.Bytes(data))
	f, err := properties.RunSource(p, cfg)
	if err != nil {
		return fmt.Errorf("the generator made an ill-formed program: %v\n%s", err, p)
	}
	if f == nil {
		return nil
	}
	small, sf := properties.ShrinkSource(p, cfg)
	var trace strings.Builder
	if err := sf.WriteTrace(&trace); err != nil {
		return fmt.Errorf("%v (and its trace could not be written: %v)\nshrunk program:\n%s", sf, err, small)
	}
	return fmt.Errorf("%v\nshrunk program:\n%strace (save it to a file and run tlcheck replay on it):\n%s", sf, small, trace.String())
}

// TestFuzzSourceCatchesEveryCodegenFault is FuzzSource's proof of power:
// with each codegen fault on, the body fails within a modest budget of
// pseudo-random inputs.
func TestFuzzSourceCatchesEveryCodegenFault(t *testing.T) {
	for _, fi := range impl.Catalog() {
		if fi.Engine != impl.EngineSource {
			continue
		}
		t.Run(string(fi.Name), func(t *testing.T) {
			cfg := impl.Config{Faults: []impl.Fault{fi.Name}}
			next := randomInputs(1)
			for i := range faultBudget {
				if err := checkSource(next(), cfg); err != nil {
					t.Logf("caught by input %d: %v", i, strings.SplitN(err.Error(), "\n", 2)[0])
					return
				}
			}
			t.Errorf("fault %s escaped %d fuzz inputs\ntrigger: %s", fi.Name, faultBudget, fi.Trigger)
		})
	}
}

// TestFuzzSourcePassesCorrectRuntime: the same inputs, no fault: no failure.
func TestFuzzSourcePassesCorrectRuntime(t *testing.T) {
	next := randomInputs(2)
	for range 1000 {
		if err := checkSource(next(), impl.Config{}); err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkFuzzSource measures the fuzz body, in programs per second.
func BenchmarkFuzzSource(b *testing.B) {
	next := randomInputs(3)
	inputs := make([][]byte, 256)
	for i := range inputs {
		inputs[i] = next()
	}
	n := 0
	for b.Loop() {
		if err := checkSource(inputs[n%len(inputs)], impl.Config{}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "programs/s")
}
