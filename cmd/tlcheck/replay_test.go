package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/internal/tracetest"
	"github.com/tlcheck/tlcheck/report"
	"github.com/tlcheck/tlcheck/traces"
)

const staleReuse = tracetest.StaleReuse

const cleanDoc = tracetest.CleanDoc

const doubleFreeNoEnd = tracetest.DoubleFreeNoEnd

// An unknown op on line 3 (event 1).
const badOp = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x20","size":16}
{"op":"frobnicate","addr":"0x20"}
{"op":"end"}
`

// files writes each named content into a temp dir and returns the paths.
func files(t *testing.T, contents ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i := 0; i+1 < len(contents); i += 2 {
		p := filepath.Join(dir, contents[i])
		if err := os.WriteFile(p, []byte(contents[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// replay runs "tlcheck replay args..." with stdin and returns the exit
// code, stdout and stderr.
func replay(stdin string, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &stdout, stderr: &stderr}
	code := run(e, append([]string{"replay"}, args...))
	return code, stdout.String(), stderr.String()
}

func TestReplayExitCodes(t *testing.T) {
	p := files(t, "stale.jsonl", staleReuse, "clean.json", cleanDoc, "df.jsonl", doubleFreeNoEnd, "bad.jsonl", badOp)
	stale, clean, df, bad := p[0], p[1], p[2], p[3]
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string // a part of stderr, "" for empty
	}{
		{"clean", []string{clean}, exitClean, ""},
		{"violation", []string{stale}, exitViolation, ""},
		{"violation, json", []string{"--json", stale}, exitViolation, ""},
		{"unreadable", []string{bad}, exitInput, bad + ":3: event 1"},
		{"missing file", []string{filepath.Join(filepath.Dir(bad), "nope.json")}, exitInput, "nope.json"},
		{"worst of several", []string{clean, df, stale}, exitViolation, ""},
		{"input error is worst", []string{clean, bad, stale}, exitInput, "frobnicate"},
		{"no files", nil, exitInput, "no files to replay"},
		{"unknown flag", []string{"--jsn", clean}, exitInput, "usage: tlcheck replay"},
		{"unknown format", []string{"--from", "strace", clean}, exitInput, `--from "strace": want auto, trace, mtrace or torch-snapshot`},
		{"help", []string{"-h"}, exitClean, "usage: tlcheck replay"},
		{"flags after files", []string{clean, "--json"}, exitClean, ""},
		{"file named like a flag after --", []string{"--", "--json"}, exitInput, "open --json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := replay("", tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if tt.stderr == "" && stderr != "" || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr, tt.stderr)
			}
		})
	}
}

func TestReplayInputErrorReportsNothing(t *testing.T) {
	p := files(t, "bad.jsonl", badOp)
	for _, args := range [][]string{{p[0]}, {"--json", p[0]}} {
		code, stdout, stderr := replay("", args...)
		if code != exitInput {
			t.Errorf("%v: exit %d; want exit 2", args, code)
		}
		for _, want := range []string{"bad.jsonl:3", "event 1", `"op"`, "frobnicate"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%v: message %q does not name %q", args, stderr, want)
			}
		}
		if len(args) == 1 && stdout != "" {
			t.Errorf("%v: stdout %q; want nothing checked", args, stdout)
		}
		if len(args) == 2 {
			// One unreadable file under --json is an error object and no
			// report, so that a machine reading stdout sees why.
			var got map[string]any
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("%v: stdout is not one JSON object: %v\n%s", args, err, stdout)
			}
			errText, _ := got["error"].(string)
			if got["file"] != p[0] || !strings.Contains(errText, "frobnicate") || len(got) != 2 {
				t.Errorf("%v: want {file, error} and nothing else, got %v", args, got)
			}
		}
	}
}

// TestReplayJSON compares the JSON report, decoded, with the verdict the
// contract gives for its example.
func TestReplayJSON(t *testing.T) {
	code, stdout, stderr := replay(staleReuse, "--json", "-")
	if code != exitViolation || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var rep traces.Report
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("stdout is not one report: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("more than one value on stdout:\n%s", stdout)
	}
	if len(rep.Violations) != 1 {
		t.Fatalf("want one violation, got %+v", rep.Violations)
	}
	v := rep.Violations[0]
	got := traces.Violation{Kind: v.Kind, Event: v.Event, Line: v.Line, Addr: v.Addr}
	want := traces.Violation{Kind: traces.StaleReuse, Event: 7, Line: 9, Addr: 0x1000}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("violation (-want +got):\n%s", diff)
	}
	if v.Message == "" || len(v.Related) == 0 {
		t.Errorf("violation without message or history: %+v", v)
	}
	if rep.Events != 8 || rep.Complete {
		t.Errorf("events %d, complete %v; want 8, false (no end event)", rep.Events, rep.Complete)
	}
}

func TestReplayJSONShape(t *testing.T) {
	p := files(t, "clean.json", cleanDoc)
	_, stdout, _ := replay("", "--json", p[0])
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"events", "violations", "leaked", "still_reachable", "complete"} {
		if _, ok := got[key]; !ok {
			t.Errorf("JSON report lacks %q: %s", key, stdout)
		}
	}
	want := map[string]any{"events": 4.0, "violations": []any{}, "complete": true,
		"leaked": map[string]any{"objects": 0.0, "bytes": 0.0}}
	for k, w := range want {
		if diff := cmp.Diff(w, got[k]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", k, diff)
		}
	}
}

func TestReplayJSONSeveralFiles(t *testing.T) {
	p := files(t, "clean.json", cleanDoc, "bad.jsonl", badOp, "df.jsonl", doubleFreeNoEnd)
	code, stdout, _ := replay("", "--json", p[0], p[1], p[2])
	if code != exitInput {
		t.Errorf("exit %d, want %d", code, exitInput)
	}
	type line struct {
		File       string             `json:"file"`
		Error      string             `json:"error"`
		Events     *int               `json:"events"`
		Violations []traces.Violation `json:"violations"`
	}
	var lines []line
	dec := json.NewDecoder(strings.NewReader(stdout))
	for {
		var l line
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not JSON Lines: %v\n%s", err, stdout)
		}
		lines = append(lines, l)
	}
	if n := strings.Count(stdout, "\n"); len(lines) != 3 || n != 3 {
		t.Fatalf("want 3 lines, one per file; got %d values on %d lines:\n%s", len(lines), n, stdout)
	}
	for i, l := range lines {
		if l.File != p[i] {
			t.Errorf("line %d names %q, want %q", i, l.File, p[i])
		}
	}
	if lines[0].Events == nil || *lines[0].Events != 4 || lines[0].Error != "" {
		t.Errorf("clean file: %+v", lines[0])
	}
	if lines[1].Events != nil || !strings.Contains(lines[1].Error, "frobnicate") {
		t.Errorf("unreadable file must carry its error and no report: %+v", lines[1])
	}
	if len(lines[2].Violations) != 1 || lines[2].Violations[0].Kind != traces.DoubleFree {
		t.Errorf("double free: %+v", lines[2])
	}
}

func TestReplayHuman(t *testing.T) {
	code, stdout, _ := replay(doubleFreeNoEnd, "-")
	if code != exitViolation {
		t.Fatalf("exit %d", code)
	}
	assertLines(t, stdout, []string{
		"ERROR: double-free at event 2 (line 4, d.c:3): addr 0x20, object #1",
		"SUMMARY: 1 violation: 1 double-free",
		"  events 3, objects 1, peak live bytes 16",
		"  INCOMPLETE: the trace stops without an end event, so no leak check ran",
	})
	for _, want := range []string{"event 1 (line 3, d.c:2)", "event 0 (line 2, d.c:1)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("history lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "\x1b[") {
		t.Errorf("colour without a terminal:\n%q", stdout)
	}
}

func TestReplayHumanSeveralFiles(t *testing.T) {
	p := files(t, "clean.json", cleanDoc, "bad.jsonl", badOp)
	_, stdout, _ := replay("", p[0], p[1])
	assertLines(t, stdout, []string{
		"== " + p[0] + " ==",
		"OK: no violations",
		"  leaked 0 objects (0 bytes), still reachable 0 objects (0 bytes)",
		"",
		"== " + p[1] + " ==",
		"not checked: unreadable input",
	})
}

func TestReplayColour(t *testing.T) {
	p := files(t, "df.jsonl", doubleFreeNoEnd)
	tests := []struct {
		name    string
		tty     bool
		noColor bool
		args    []string
		colour  bool
	}{
		{"terminal", true, false, nil, true},
		{"NO_COLOR", true, true, nil, false},
		{"not a terminal", false, false, nil, false},
		{"json on a terminal", true, false, []string{"--json"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout bytes.Buffer
			e := &env{stdout: &stdout, stderr: io.Discard, noColor: tt.noColor,
				isTTY: func(io.Writer) bool { return tt.tty }}
			run(e, append(append([]string{"replay"}, tt.args...), p[0]))
			if got := strings.Contains(stdout.String(), "\x1b["); got != tt.colour {
				t.Errorf("colour %v, want %v:\n%q", got, tt.colour, stdout.String())
			}
		})
	}
}

func TestRunRecoversPanic(t *testing.T) {
	saved := commands
	defer func() { commands = saved }()
	commands = append(commands, command{name: "boom", run: func(*env, []string) int { panic("kaboom") }})
	var stderr bytes.Buffer
	code := run(&env{stdout: io.Discard, stderr: &stderr}, []string{"boom"})
	if code != exitInput || !strings.Contains(stderr.String(), "internal error: kaboom") ||
		!strings.Contains(stderr.String(), "please report") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr.String())
	}
}

func TestParseReplayArgs(t *testing.T) {
	tests := []struct {
		args   []string
		from   string
		format report.Format
		files  []string
	}{
		{[]string{"a"}, "auto", report.Text, []string{"a"}},
		{[]string{"--json", "a", "b"}, "auto", report.JSON, []string{"a", "b"}},
		{[]string{"a", "--from", "mtrace", "b"}, "mtrace", report.Text, []string{"a", "b"}},
		{[]string{"-", "-json"}, "auto", report.JSON, []string{"-"}},
		{[]string{"--from=mtrace", "--", "-x", "--json"}, "mtrace", report.Text, []string{"-x", "--json"}},
		{[]string{"--format", "sarif", "a"}, "auto", report.SARIF, []string{"a"}},
		{[]string{"a", "--format=junit"}, "auto", report.JUnit, []string{"a"}},
		{[]string{"--json", "--format", "json", "a"}, "auto", report.JSON, []string{"a"}},
	}
	for _, tt := range tests {
		opts, files, err := parseReplayArgs(tt.args)
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if opts.from != tt.from || opts.check.format != tt.format || !cmp.Equal(files, tt.files) {
			t.Errorf("%q: got from %q format %q files %q, want %q %q %q",
				tt.args, opts.from, opts.check.format, files, tt.from, tt.format, tt.files)
		}
	}
}

func TestReplayCPUProfile(t *testing.T) {
	in := files(t, "t.jsonl", doubleFreeNoEnd)[0]
	out := filepath.Join(filepath.Dir(in), "cpu.pprof")
	code, _, stderr := replay("", "--cpuprofile", out, in)
	if code != exitViolation || stderr != "" {
		t.Fatalf("exit %d, stderr %q; want %d and nothing", code, stderr, exitViolation)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		t.Errorf("the profile is not a gzipped pprof profile: % x", data[:min(len(data), 8)])
	}

	// The profile never takes the place of a file to replay.
	before, _ := os.ReadFile(in)
	code, _, stderr = replay("", "--cpuprofile", in, in)
	if code != exitInput || !strings.Contains(stderr, "is one of the files to replay") {
		t.Errorf("profile over the input: exit %d, stderr %q", code, stderr)
	}
	if after, _ := os.ReadFile(in); !bytes.Equal(before, after) {
		t.Error("the input was overwritten")
	}
	code, _, stderr = replay("", "--cpuprofile", filepath.Join(filepath.Dir(in), "no", "such", "dir.pprof"), in)
	if code != exitInput || !strings.Contains(stderr, "--cpuprofile") {
		t.Errorf("profile in a missing directory: exit %d, stderr %q", code, stderr)
	}
}

// TestReplayHumanHugeSizes holds the human report to the JSON on sizes past
// an int: a leak of 2^64-1 bytes was once printed as "-1 bytes".
func TestReplayHumanHugeSizes(t *testing.T) {
	tests := []struct {
		name  string
		trace string
		want  []string
	}{
		{"leak of 2^64-1 bytes", `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x1","size":18446744073709551615}
{"op":"end"}
`, []string{
			"  events 2, objects 1, peak live bytes 18446744073709551615",
			"  leaked 1 object (18446744073709551615 bytes), still reachable 0 objects (0 bytes)",
		}},
		{"leak of 2^63 bytes", `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":9223372036854775808}
{"op":"end"}
`, []string{"  leaked 1 object (9223372036854775808 bytes), still reachable 0 objects (0 bytes)"}},
		{"leak of 1 byte", `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":1}
{"op":"end"}
`, []string{"  leaked 1 object (1 byte), still reachable 0 objects (0 bytes)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := replay(tt.trace, "-")
			if code != exitViolation {
				t.Fatalf("exit %d, want %d; stderr: %s", code, exitViolation, stderr)
			}
			assertLines(t, stdout, tt.want)
			if strings.Contains(stdout, "-1") {
				t.Errorf("a negative count in:\n%s", stdout)
			}
		})
	}
}
