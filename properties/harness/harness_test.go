package harness_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/properties/harness"
)

// TestSearch: the same seed finds the same program; a budget that runs out
// first finds none; a hidden failure ends the search only after Grace more
// programs found none that shows.
func TestSearch(t *testing.T) {
	hiddenAll := digits()
	hiddenAll.Grace = 5
	run := hiddenAll.Run
	hiddenAll.Run = func(p []int) *harness.Failure {
		if f := run(p); f != nil {
			f.Hidden = true
			return f
		}
		return nil
	}
	for _, tt := range []struct {
		name   string
		l      harness.Language[[]int]
		budget int
		found  bool
		ran    func(first, n int) bool // n, given the run that found the first failure
	}{
		{"found", digits(), 1000, true, func(first, n int) bool { return n == first }},
		{"budget spent", digits(), 0, false, func(_, n int) bool { return n == 0 }},
		{"hidden, grace spent", hiddenAll, 1000, true, func(first, n int) bool { return n == first+5 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			more := func(n int) bool { return n < tt.budget }
			p, f, n := harness.Search(tt.l, 3, more)
			if (f != nil) != tt.found {
				t.Fatalf("failure %v, want found %t", f, tt.found)
			}
			_, _, first := harness.Search(digits(), 3, more)
			if !tt.ran(first, n) {
				t.Errorf("ran %d programs (the first failure after %d)", n, first)
			}
			if f == nil {
				return
			}
			q, g, m := harness.Search(tt.l, 3, more)
			if m != n || g.Message != f.Message || len(q) != len(p) {
				t.Errorf("the same seed: program %v after %d, want %v after %d", q, m, p, n)
			}
		})
	}
}

// TestShrink: the driver takes the language's shrinker where it has one,
// its candidates otherwise, and never returns a nil failure.
func TestShrink(t *testing.T) {
	fail := &harness.Failure{Property: "NoSeven", Message: "digit 2 is 7", Call: 2}
	p := []int{1, 2, 7, 3}
	own := digits()
	own.Shrink = func([]int, *harness.Failure) ([]int, *harness.Failure) { return []int{7}, fail }
	none := digits()
	none.Shrink = func([]int, *harness.Failure) ([]int, *harness.Failure) { return nil, nil }
	neither := digits()
	neither.Candidates = nil
	for _, tt := range []struct {
		name string
		l    harness.Language[[]int]
		want int // the shrunk program's length
	}{
		{"candidates", digits(), 1},
		{"its own shrinker", own, 1},
		{"a shrinker that finds nothing", none, 4},
		{"no way to shrink", neither, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			small, f := harness.Shrink(tt.l, p, fail)
			if f == nil || len(small) != tt.want {
				t.Errorf("shrunk to %v, failure %v; want %d digits and a failure", small, f, tt.want)
			}
		})
	}
}

// TestFuzz: the pipeline's report, file and outcome, for a language with
// a trace and one that saves its program beside it, and a write that
// fails after the search.
func TestFuzz(t *testing.T) {
	saving := digits()
	saving.Ext = ".dg"
	saving.Head = func(seed uint64, fault, property string) string { return "# " + property + "\n" }
	saving.Again = func(path, fault string) []string { return []string{"fuzz", "--replay", path} }
	for _, tt := range []struct {
		name    string
		l       harness.Language[[]int]
		fail    bool // the write fails
		outcome harness.Outcome
		has     []string
		files   int
	}{
		{"trace", digits(), false, harness.Found, []string{"property broken: NoSeven\n", "shrunk from ", " digits to 1:\n[7]\n", "reproduce: tlcheck replay "}, 1},
		{"program beside", saving, false, harness.Found, []string{"program written to ", ".dg\n", "check the program again after a change: tlcheck fuzz --replay "}, 2},
		{"write fails", digits(), true, harness.Found, []string{"NOT written (no space); save it to a file to replay it:", "reproduce: tlcheck replay FILE\n"}, 0},
		{"program, write fails", saving, true, harness.Found, []string{"NOT written (no space):\n"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var out, errOut bytes.Buffer
			opts := harness.Options{Seed: 1, Time: 5 * time.Second, Out: dir, Stdout: &out, Stderr: &errOut}
			if tt.fail {
				opts.Save = func(string, string, string, []byte) (string, error) { return "", errors.New("no space") }
			}
			if got := harness.Fuzz(tt.l, opts); got != tt.outcome {
				t.Errorf("outcome %d, want %d", got, tt.outcome)
			}
			for _, s := range tt.has {
				if !strings.Contains(out.String(), s) {
					t.Errorf("report lacks %q:\n%s", s, out.String())
				}
			}
			if tt.fail != strings.Contains(errOut.String(), "printed on standard output instead") {
				t.Errorf("stderr %q: want the failed write said exactly when it failed", errOut.String())
			}
			if entries, _ := os.ReadDir(dir); len(entries) != tt.files {
				t.Errorf("%d files written, want %d", len(entries), tt.files)
			}
			if tt.files == 2 {
				if b, _ := os.ReadFile(filepath.Join(dir, "tlcheck-digits-seed1.dg")); string(b) != "# NoSeven\n[7]\n" {
					t.Errorf("program file %q", b)
				}
			}
		})
	}
	var out bytes.Buffer
	if got := harness.Fuzz(digits(), harness.Options{Seed: 1, Time: time.Nanosecond, Out: t.TempDir(), Stdout: &out}); got != harness.Clean || !strings.Contains(out.String(), "0 programs against the digits") {
		t.Errorf("a search with no time: outcome %d, %q", got, out.String())
	}
}

// TestRecheck: a saved program, read back and run again.
func TestRecheck(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name, text string
		outcome    harness.Outcome
		has        string
	}{
		{"fails", "[1 7]\n", harness.Found, "property broken: NoSeven\ndigit 1 is 7\n\n[1 7]\n"},
		{"passes", "[1 2]\n", harness.Clean, "(2 digits) against the digits: no failure"},
		{"no program", "[x]\n", harness.Trouble, "invalid syntax"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			os.WriteFile(path, []byte(tt.text), 0o644)
			var out, errOut bytes.Buffer
			got := harness.Recheck(digits(), path, harness.Options{Stdout: &out, Stderr: &errOut})
			if got != tt.outcome || !strings.Contains(out.String()+errOut.String(), tt.has) {
				t.Errorf("outcome %d, output %q%q; want %d and %q", got, out.String(), errOut.String(), tt.outcome, tt.has)
			}
		})
	}
	if got := harness.Recheck(digits(), filepath.Join(dir, "none"), harness.Options{Stdout: new(bytes.Buffer), Stderr: new(bytes.Buffer)}); got != harness.Trouble {
		t.Errorf("a missing file: outcome %d, want Trouble", got)
	}
}

// TestFailure: Broke names every property, the first first; Detail is
// reached by errors.As.
func TestFailure(t *testing.T) {
	inner := &os.PathError{Op: "x"}
	f := &harness.Failure{Property: "A", Also: []string{"B", "C"}, Message: "m", Detail: inner}
	var pe *os.PathError
	if f.Broke() != "A, B, C" || f.Error() != "A: m" || !errors.As(f, &pe) {
		t.Errorf("Broke %q, Error %q, As %t", f.Broke(), f.Error(), errors.As(f, &pe))
	}
}
