package fuzz

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/properties/flat"
)

var update = flag.Bool("update", false, "rewrite FuzzProgram's seeds from their readable programs")

// Each FuzzProgram seed in testdata/fuzz/FuzzProgram is kept beside its
// readable program in testdata/programs/NAME.prog. The program is the
// source: a change to the byte encoding (a call added in the wrong place,
// a weight changed) shows here as a seed that no longer decodes to its
// program, and -update writes the seeds anew from the programs.
const (
	seedDir    = "testdata/fuzz/FuzzProgram"
	programDir = "testdata/programs"
)

// TestSeedPrograms checks that every seed decodes to its readable program
// and that every program has its seed; with -update it first writes each
// program's seed from flat.Encode.
func TestSeedPrograms(t *testing.T) {
	progs, err := filepath.Glob(filepath.Join(programDir, "*.prog"))
	if err != nil || len(progs) == 0 {
		t.Fatalf("no programs in %s (%v)", programDir, err)
	}
	for _, path := range progs {
		name := strings.TrimSuffix(filepath.Base(path), ".prog")
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want, err := flat.ParseProgram(string(text))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			seed := filepath.Join(seedDir, name)
			if *update {
				if err := atomicfile.Replace(seed, corpusFile(flat.Encode(want))); err != nil {
					t.Fatal(err)
				}
			}
			data, err := readCorpusFile(seed)
			if err != nil {
				t.Fatalf("%v (run go test ./fuzz -run TestSeedPrograms -update to write it)", err)
			}
			if got := flat.Decode(data); !cmp.Equal(got.String(), want.String()) {
				t.Errorf("seed %s no longer decodes to %s (-got +want):\n%s\nIf the encoding changed on purpose, run go test ./fuzz -run TestSeedPrograms -update",
					seed, path, cmp.Diff(got.String(), want.String()))
			}
		})
	}
	seeds, _ := filepath.Glob(filepath.Join(seedDir, "*"))
	for _, seed := range seeds {
		if _, err := os.Stat(filepath.Join(programDir, filepath.Base(seed)+".prog")); err != nil {
			t.Errorf("seed %s has no readable program in %s", seed, programDir)
		}
	}
}

// corpusFile is data as a Go fuzzing corpus file of one []byte value.
func corpusFile(data []byte) []byte {
	return []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(data))))
}

// readCorpusFile reads a corpus file of one []byte value, as corpusFile
// writes it and `go test -fuzz` saves it.
func readCorpusFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	header, value, ok := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	if !ok || string(header) != "go test fuzz v1" {
		return nil, fmt.Errorf("%s: not a Go fuzzing corpus file", path)
	}
	q, ok := bytes.CutPrefix(bytes.TrimSpace(value), []byte("[]byte("))
	if q, ok = bytes.CutSuffix(q, []byte(")")); !ok {
		return nil, fmt.Errorf("%s: want one []byte value", path)
	}
	s, err := strconv.Unquote(string(q))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return []byte(s), nil
}
