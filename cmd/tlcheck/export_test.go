package main

import (
	"bytes"
	"github.com/tlcheck/tlcheck/internal/tracetest"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// export runs "tlcheck export args..." with stdin and returns the exit
// code, stdout and stderr.
func exportCmd(stdin string, args ...string) (int, string, string) {
	return exportTTY(stdin, false, args...)
}

// exportTTY is export with standard output a terminal or not.
func exportTTY(stdin string, tty bool, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &stdout, stderr: &stderr,
		isTTY: func(io.Writer) bool { return tty }}
	code := run(e, append([]string{"export"}, args...))
	return code, stdout.String(), stderr.String()
}

const timedClean = tracetest.TimedClean

func TestExportExitCodes(t *testing.T) {
	p := files(t, "stale.jsonl", staleReuse, "clean.json", cleanDoc, "bad.jsonl", badOp)
	stale, clean, bad := p[0], p[1], p[2]
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stderr string // a part of the message on standard error
	}{
		{"clean", []string{"--format", "perfetto", clean}, "", exitClean, ""},
		{"violation", []string{"--format", "html", stale}, "", exitViolation, ""},
		{"flags after the trace", []string{stale, "--format", "perfetto"}, "", exitViolation, ""},
		{"stdin", []string{"--format", "perfetto", "-"}, staleReuse, exitViolation, ""},
		{"mtrace", []string{"--format", "perfetto", "--from", "mtrace", "-"}, "@ ./p:[0x1] + 0x10 0x8\n", exitViolation, ""},
		{"unreadable input", []string{"--format", "perfetto", bad}, "", exitInput, "bad.jsonl:3"},
		{"missing file", []string{"--format", "html", filepath.Join(t.TempDir(), "none.jsonl")}, "", exitInput, "none.jsonl"},
		{"no format", []string{clean}, "", exitInput, "--format is required"},
		{"unknown format", []string{"--format", "svg", clean}, "", exitInput, `--format "svg"`},
		{"unknown from", []string{"--format", "html", "--from", "x", clean}, "", exitInput, `--from "x"`},
		{"no trace", []string{"--format", "html"}, "", exitInput, "no trace"},
		{"two traces", []string{"--format", "html", clean, stale}, "", exitInput, "one trace at a time"},
		{"help", []string{"-h"}, "", exitClean, "usage: tlcheck export"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := exportCmd(tc.stdin, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
		})
	}
}

// TestExportOut checks --out: written whole on success, untouched on an
// input error, refused where it is the trace itself, and pprof's refusal
// of a terminal.
func TestExportOut(t *testing.T) {
	p := files(t, "stale.jsonl", staleReuse, "bad.jsonl", badOp)
	stale, bad := p[0], p[1]
	dir := filepath.Dir(stale)
	tests := []struct {
		name     string
		args     []string
		tty      bool
		code     int
		out      string // the file to look at afterwards
		wantOut  string // a part of it; "" for unchanged ("old")
		noStdout bool
	}{
		{"written", []string{"--format", "html", "--out", filepath.Join(dir, "a.html"), stale}, false, exitViolation, filepath.Join(dir, "a.html"), "<!DOCTYPE html>", true},
		{"replaced", []string{"--format", "perfetto", "--out", filepath.Join(dir, "old.json"), stale}, false, exitViolation, filepath.Join(dir, "old.json"), `"traceEvents"`, true},
		{"input error leaves it", []string{"--format", "perfetto", "--out", filepath.Join(dir, "keep.json"), bad}, false, exitInput, filepath.Join(dir, "keep.json"), "", true},
		{"the trace itself", []string{"--format", "html", "--out", stale, stale}, false, exitInput, stale, `"op":"alloc"`, true},
		{"the trace under another name", []string{"--format", "html", "--out", filepath.Join(dir, ".", "stale.jsonl"), stale}, false, exitInput, stale, `"op":"alloc"`, true},
		{"missing folder", []string{"--format", "html", "--out", filepath.Join(dir, "no", "a.html"), stale}, false, exitInput, "", "", true},
		{"dash is standard output", []string{"--format", "html", "--out", "-", stale}, true, exitViolation, "", "", false},
		{"pprof to a terminal", []string{"--format", "pprof", stale}, true, exitInput, "", "", true},
		{"pprof to a pipe", []string{"--format", "pprof", stale}, false, exitViolation, "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range []string{"old.json", "keep.json"} {
				os.WriteFile(filepath.Join(dir, f), []byte("old"), 0o644)
			}
			code, stdout, stderr := exportTTY("", tc.tty, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if (stdout == "") != tc.noStdout {
				t.Errorf("standard output holds %d bytes", len(stdout))
			}
			if tc.out != "" {
				got, err := os.ReadFile(tc.out)
				want := tc.wantOut
				if want == "" {
					want = "old"
				}
				if err != nil || !strings.Contains(string(got), want) {
					t.Errorf("%s holds %.80q (%v), want it to hold %q", tc.out, got, err, want)
				}
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".tmp") {
					t.Errorf("temporary file %s left behind", e.Name())
				}
			}
		})
	}
}

// failWriter fails every write, as a closed pipe or a full disk does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// TestExportWriteFails checks that a failed write is exit 2, named as a
// write and not blamed on the trace.
func TestExportWriteFails(t *testing.T) {
	for _, format := range []string{"perfetto", "pprof", "html", "torch-snapshot"} {
		t.Run(format, func(t *testing.T) {
			var stderr bytes.Buffer
			e := &env{stdin: strings.NewReader(manyDoubleFrees(3000)), stdout: failWriter{}, stderr: &stderr}
			if code := run(e, []string{"export", "--format", format, "-"}); code != exitInput {
				t.Errorf("exit %d, want %d", code, exitInput)
			}
			if msg := stderr.String(); !strings.Contains(msg, "writing") || strings.Contains(msg, "<stdin>") {
				t.Errorf("stderr: %s", msg)
			}
		})
	}
}

// TestExportDetectsMtrace: export tells an mtrace log from a trace by its
// first line, as replay does, unless --from names the format.
func TestExportDetectsMtrace(t *testing.T) {
	log := "= Start\n@ ./prog:[0x1149] + 0x5555555592a0 0x20\n"
	code, stdout, stderr := exportCmd(log, "--format", "html", "-")
	if code != exitViolation || !strings.Contains(stdout, "leak") {
		t.Errorf("auto: exit %d, stderr %q; want the log's leak exported (exit 1)", code, stderr)
	}
	code, _, stderr = exportCmd(log, "--format", "html", "--from", "trace", "-")
	if code != exitInput || !strings.Contains(stderr, "looks like a glibc mtrace log") {
		t.Errorf("--from trace: exit %d, stderr %q; want exit 2 with a hint", code, stderr)
	}
}
