package main

import (
	"bytes"
	"errors"
	"github.com/tlcheck/tlcheck/internal/safetext"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// tlcheck runs the command line with args and returns the exit code,
// stdout and stderr; tty says whether stderr is to pass for a terminal.
func tlcheck(tty bool, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		isTTY: func(w io.Writer) bool { return tty && w == &stderr }}
	code := run(e, args)
	return code, stdout.String(), stderr.String()
}

var reproduceLine = regexp.MustCompile(`(?m)^reproduce: tlcheck replay (\S+)$`)

func TestFuzzFindsFaultAndWritesReplayableTrace(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := tlcheck(false, "fuzz", "--fault", "unregister-releases", "--time", "20s", "--seed", "1", "--out", dir)
	if code != exitViolation {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitViolation, out, errOut)
	}
	if errOut != "" {
		t.Errorf("stderr is not a terminal, yet it got %q", errOut)
	}
	for _, want := range []string{"property broken: ", "shrunk from ", `{"format":"tlcheck-trace"`} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	m := reproduceLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("stdout has no reproduce line:\n%s", out)
	}
	path := m[1]
	if filepath.Dir(path) != dir {
		t.Errorf("trace written to %s, want it in %s", path, dir)
	}
	if code, rout, rerr := tlcheck(false, "replay", path); code != exitViolation {
		t.Errorf("tlcheck replay %s: exit %d, want %d\n%s%s", path, code, exitViolation, rout, rerr)
	}

	// The same seed finds the same failure; the first file stays.
	before, _ := os.ReadFile(path)
	code, out2, _ := tlcheck(false, "fuzz", "--fault", "unregister-releases", "--time", "20s", "--seed", "1", "--out", dir)
	m2 := reproduceLine.FindStringSubmatch(out2)
	if code != exitViolation || m2 == nil {
		t.Fatalf("second run: exit %d\n%s", code, out2)
	}
	if m2[1] == path {
		t.Errorf("second run wrote over %s", path)
	}
	after, _ := os.ReadFile(path)
	second, _ := os.ReadFile(m2[1])
	if !bytes.Equal(before, after) || !bytes.Equal(before, second) {
		t.Errorf("same seed, different traces, or the first file changed")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("out dir holds %d entries, want the 2 traces and no temporary file", len(entries))
	}
}

func TestFuzzCleanRuntime(t *testing.T) {
	code, out, errOut := tlcheck(false, "fuzz", "--time", "300ms", "--seed", "3", "--out", t.TempDir())
	if code != exitClean {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !regexp.MustCompile(`^tlcheck fuzz: \d+ programs against the runtime in .* \(\d+ programs/s\), seed 3: no failure\n$`).MatchString(out) {
		t.Errorf("unexpected summary %q", out)
	}
	if errOut != "" {
		t.Errorf("progress on a non-terminal stderr: %q", errOut)
	}
}

func TestFuzzProgressOnTerminal(t *testing.T) {
	code, out, errOut := tlcheck(true, "fuzz", "--time", "700ms", "--seed", "3", "--out", t.TempDir())
	if code != exitClean {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !regexp.MustCompile(`\r\d+ programs, \d+/s`).MatchString(errOut) {
		t.Errorf("no progress on a terminal stderr: %q", errOut)
	}
	if strings.Contains(out, "\r") {
		t.Errorf("progress leaked into stdout: %q", out)
	}
}

// missingDir is a folder that does not exist.
var missingDir = filepath.Join(os.TempDir(), "tlcheck-no-such-dir", "out")

func TestFuzzUsage(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		code    int
		wantErr string
	}{
		{"help", []string{"-h"}, exitClean, "usage: tlcheck fuzz"},
		{"unknown fault", []string{"--fault", "no-such-fault"}, exitInput, "stale-record-not-purged"},
		// Every fault of the catalog, not only those fuzz takes.
		{"unknown fault, all listed", []string{"--fault", "no-such-fault"}, exitInput, "autograd-snapshot-shallow"},
		{"registry fault", []string{"--fault", "registry-alias-underflow"}, exitInput, "hunted by the registry engine"},
		{"pool fault", []string{"--fault", "pool-free-no-merge"}, exitInput, "hunted by the pool engine"},
		{"autograd fault", []string{"--fault", "autograd-double-bump"}, exitInput,
			"fault autograd-double-bump is hunted by the autograd engine, not by generated programs (tlcheck selftest runs it); fuzz takes the program and source engines' faults:\n"},
		{"bad duration", []string{"--time", "soon"}, exitInput, "usage: tlcheck fuzz"},
		{"negative duration", []string{"--time", "-1s"}, exitInput, "positive duration"},
		{"bad seed", []string{"--seed", "-3"}, exitInput, "--seed"},
		{"unknown flag", []string{"--bogus"}, exitInput, "bogus"},
		{"stray argument", []string{"trace.json"}, exitInput, "unexpected argument"},
		// --out is checked before the search: a clean runtime would search
		// the whole --time and exit 0 without ever writing.
		{"--out missing", []string{"--time", "300ms", "--out", missingDir}, exitInput, "--out: stat " + missingDir},
		{"--out a file", []string{"--time", "300ms", "--out", "fuzz_test.go"}, exitInput, "--out: write into fuzz_test.go: not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := tlcheck(false, append([]string{"fuzz"}, tt.args...)...)
			if code != tt.code || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tt.code, tt.wantErr)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
		})
	}
}

// TestFuzzWriteFailsAfterSearch makes the write of the trace fail after
// --out passed its check (the folder removed meanwhile, a full disk): the
// counterexample must still reach the user, on stdout, and replay.
func TestFuzzWriteFailsAfterSearch(t *testing.T) {
	defer func(w func(string, string, string, []byte) (string, error)) { writeCounterexample = w }(writeCounterexample)
	writeCounterexample = func(dir, _, _ string, _ []byte) (string, error) {
		return "", &os.PathError{Op: "open", Path: dir, Err: errors.New("no space left on device")}
	}
	dir := t.TempDir()
	code, out, errOut := tlcheck(false, "fuzz", "--fault", "unregister-releases", "--time", "20s", "--seed", "1", "--out", dir)
	if code != exitViolation {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitViolation, out, errOut)
	}
	if !strings.Contains(errOut, "no space left on device") || !strings.Contains(errOut, "printed on standard output") {
		t.Errorf("stderr %q does not say the write failed and where the trace went", errOut)
	}
	if !strings.Contains(out, "NOT written") || strings.Contains(out, "written to") {
		t.Errorf("stdout does not say the trace was not written:\n%s", out)
	}
	// The printed trace is whole: it replays to the violation.
	start := strings.Index(out, `{"format":"tlcheck-trace"`)
	end := strings.Index(out, "\nreproduce:")
	if start < 0 || end < start {
		t.Fatalf("no trace on stdout:\n%s", out)
	}
	code, rout, rerr := tlcheck(false, "replay", writeFile(t, "printed.jsonl", out[start:end]))
	if code != exitViolation {
		t.Errorf("the printed trace replays with exit %d, want %d\n%s%s", code, exitViolation, rout, rerr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("out dir holds %d entries, want none", len(entries))
	}
}

// shellQuote quotes a command line's word, as every line tlcheck prints does.
var shellQuote = safetext.ShellQuote

// writeFile writes content to a new file in a temporary folder.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
