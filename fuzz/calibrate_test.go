//go:build tlcheck_calibrate

package fuzz

import (
	"testing"

	"github.com/tlcheck/tlcheck/properties/flat"
)

// The calibration targets measure what FuzzProgram's rate owes to Go's
// fuzzing engine rather than to its body: run as a user runs FuzzProgram
// (go test -fuzz), FuzzNothing's rate is the engine's alone, and
// FuzzDecodeOnly's the engine's with the input decoded into a program.
// reports/gen writes the three side by side in reports/benchmarks.md.
// They check nothing and pass every input, so they are no fuzz targets of
// the normal build (nor of .clusterfuzzlite/build.sh's): reports/gen
// builds them with the tag, as
//
//	go test -tags tlcheck_calibrate -run '^$' -fuzz '^FuzzNothing$' ./fuzz

// FuzzNothing is a target whose body does nothing.
func FuzzNothing(f *testing.F) {
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, data []byte) {})
}

// FuzzDecodeOnly decodes its input as FuzzProgram does (its first
// maxProgramBytes bytes), and runs nothing.
func FuzzDecodeOnly(f *testing.F) {
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, data []byte) {
		decoded = flat.Decode(data[:min(len(data), maxProgramBytes)])
	})
}

// decoded keeps FuzzDecodeOnly's program, so that the decoding is not
// optimised away.
var decoded flat.Program
