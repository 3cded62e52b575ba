package fuzz

import (
	"fmt"
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
