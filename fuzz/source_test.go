package fuzz

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/lang"
	"github.com/tlcheck/tlcheck/properties/harness"
	"github.com/tlcheck/tlcheck/properties/source"
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
	f, err := source.Run(p, cfg)
	if err != nil {
		return fmt.Errorf("the generator made an ill-formed program: %v\n%s", err, p)
	}
	if f == nil {
		return nil
	}
	l := source.Language(cfg.Faults)
	small, sf := harness.Shrink(l, p, l.Run(p))
	var trace strings.Builder
	if err := sf.Trace(&trace); err != nil {
		return fmt.Errorf("%v (and its trace could not be written: %v)\nshrunk program:\n%s", sf, err, small)
	}
	return fmt.Errorf("%v\nshrunk program:\n%strace (save it to a file and run tlcheck replay on it):\n%s", sf, small, trace.String())
}
