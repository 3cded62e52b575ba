package fuzz

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties"
	"github.com/tlcheck/tlcheck/properties/flat"
)

// FuzzProgram decodes bytes into a program (flat.Decode: ops and
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

// maxProgramBytes bounds the bytes of an input FuzzProgram decodes: some
// 50 steps, as long as the inputs that prove the body's power
// (TestFuzzBodyCatchesEveryFault) and most of what flat.Generate
// draws (Decode alone would read up to MaxSteps, some 600 bytes). Go's
// fuzzer minimises each input that finds new coverage by trying to drop
// every byte and every run of bytes, some n*n/2 runs for n bytes, and
// counts none of them as execs: the bytes past the bound change nothing,
// so it drops them first, and no minimisation runs longer than about
// 8,000 programs (under a second on an idle core), where a 600-byte input
// took the whole -fuzzminimizetime (60 s), the search stalled meanwhile.
const maxProgramBytes = 128

// checkProgram is FuzzProgram's body: nil if the program its first
// maxProgramBytes bytes decode to passes every property against cfg, else
// the shrunk failure with its trace as JSON Lines.
func checkProgram(data []byte, cfg impl.Config) error {
	p := flat.Decode(data[:min(len(data), maxProgramBytes)])
	if properties.Passes(p, cfg) {
		return nil
	}
	small, f := properties.Shrink(p, cfg)
	var trace strings.Builder
	if err := f.WriteTrace(&trace); err != nil {
		return fmt.Errorf("%v (and its trace could not be written: %v)", f, err)
	}
	return fmt.Errorf("%v\nshrunk program:\n%vtrace (save it to a file and run tlcheck replay on it):\n%s", f, small, trace.String())
}
