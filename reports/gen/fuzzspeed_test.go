package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestParseFuzzRate reads the rate over the whole run from go test -fuzz's
// last status line, and refuses output without one.
func TestParseFuzzRate(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      float64 // -1: an error
	}{
		{"last line wins", "fuzz: elapsed: 0s, gathering baseline coverage: 0/12 completed\n" +
			"fuzz: elapsed: 3s, execs: 9000 (3000/sec), new interesting: 1 (total: 13)\n" +
			"fuzz: elapsed: 1m0s, execs: 270000 (4100/sec), new interesting: 5 (total: 17)\nPASS\n", 4500},
		{"seconds only", "fuzz: elapsed: 5s, execs: 100 (20/sec), new interesting: 0 (total: 1)\n", 20},
		{"no status line", "PASS\nok  \tgithub.com/tlcheck/tlcheck/fuzz\t1.2s\n", -1},
		{"zero elapsed", "fuzz: elapsed: 0s, execs: 10 (10/sec), new interesting: 0 (total: 1)\n", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFuzzRate(tc.out)
			switch {
			case tc.want < 0 && err == nil:
				t.Fatalf("got %v, want an error", got)
			case tc.want >= 0 && err != nil:
				t.Fatal(err)
			case tc.want >= 0 && math.Abs(got-tc.want) > 1e-9:
				t.Fatalf("got %v programs/s, want %v", got, tc.want)
			}
		})
	}
}

// TestFuzzArgsTagsCalibration: the calibration targets are built with the
// tag that makes them fuzz targets, and FuzzProgram as a user builds it,
// with none.
func TestFuzzArgsTagsCalibration(t *testing.T) {
	for _, ft := range fuzzTargets {
		args := strings.Join(fuzzArgs(ft.name, ft.tags, time.Minute, "c"), " ")
		tagged := strings.Contains(args, "-tags "+calibrateTag+" ")
		if want := ft.name != "FuzzProgram"; tagged != want {
			t.Errorf("%s: go %s: tagged %v, want %v", ft.name, args, tagged, want)
		}
		if !strings.Contains(args, "-fuzz ^"+ft.name+"$ -fuzztime 1m0s ./fuzz") {
			t.Errorf("%s: go %s", ft.name, args)
		}
	}
	// The tag does make them targets: the calibration file asks for it.
	text, err := os.ReadFile(filepath.Join("..", "..", "fuzz", "calibrate_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(text), "//go:build "+calibrateTag+"\n") {
		t.Errorf("fuzz/calibrate_test.go is not built by the tag %s alone", calibrateTag)
	}
}

// TestFuzzMiss says by how much FuzzProgram missed and why, from the
// figures: nothing where the target was met.
func TestFuzzMiss(t *testing.T) {
	fs := fuzzSpeed{Fuzz: map[string]float64{"FuzzNothing": 14_590, "FuzzProgram": 8_748}, Instr: 9_022, Workers: 2}
	got := fuzzMiss(fs)
	for _, want := range []string{"Missed by 1.14x (8,748 of 10,000 programs/s)", "about 229 µs an input",
		"the engine's own 137 µs", "the instrumented body's 111 µs", "leaves the body 63 µs", "1.8x cheaper",
		"about 14,346 programs/s"} {
		if !strings.Contains(got, want) {
			t.Errorf("fuzzMiss lacks %q:\n%s", want, got)
		}
	}
	fs.Fuzz["FuzzProgram"] = 10_500
	if got := fuzzMiss(fs); got != "" {
		t.Errorf("the target met, fuzzMiss says %q", got)
	}
	fs.Fuzz["FuzzProgram"], fs.Fuzz["FuzzNothing"] = 4_000, 9_000
	if got := fuzzMiss(fs); !strings.Contains(got, "less than the engine alone takes here") {
		t.Errorf("an engine slower than the target: %q", got)
	}
}
