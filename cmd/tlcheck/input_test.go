package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// pipe hides a reader's Seek, as standard input from a pipe has none.
type pipe struct{ io.Reader }

// TestReplayInputs covers what a person may hand replay by mistake or by
// habit: an mtrace log without --from, a format forced on the other one,
// a byte-order mark, an empty log, a line of megabytes. Each case runs
// from a file and from standard input, seekable and not.
func TestReplayInputs(t *testing.T) {
	const leakLog = "= Start\n@ ./prog:[0x11ce] + 0x4052a0 0x20\n@ ./prog:[0x11e0] + 0x4056d0 0x40\n@ ./prog:[0x11f2] - 0x4052a0\n"
	headerLast := `{"events":[{"op":"malloc","addr":"0x10","size":8},{"op":"free","addr":"0x10"},{"op":"end"}],"format":"tlcheck-trace","version":1}`
	long := "= Start\n@ ./prog:[0x11ce] + 0x10 0x8\n" + strings.Repeat("Z", 1<<20) + "\n"
	tests := []struct {
		name    string
		input   string
		args    []string
		code    int
		events  int    // with exit 0 or 1: the report's event count
		stderr  string // with exit 2: a part of the message
		notErr  string // with exit 2: what the message must not say
		summary string // with exit 0 or 1: a line of the human report
	}{
		{name: "mtrace log detected", input: leakLog, code: exitViolation, events: 4,
			summary: "  leaked 1 object (64 bytes), still reachable 0 objects (0 bytes)"},
		{name: "mtrace log detected after blank lines", input: "\n\n" + leakLog, code: exitViolation, events: 4},
		{name: "mtrace log without a caller detected", input: "+ 0x10 0x8\n- 0x10\n", code: exitClean, events: 3},
		{name: "start only is a clean log", input: "= Start\n", code: exitClean, events: 1},
		{name: "--from auto is the default", input: leakLog, args: []string{"--from", "auto"}, code: exitViolation, events: 4},
		{name: "--from mtrace still reads a log", input: leakLog, args: []string{"--from", "mtrace"}, code: exitViolation, events: 4},
		{name: "trace detected", input: doubleFreeNoEnd, code: exitViolation, events: 3},
		{name: "document with the header last", input: headerLast, code: exitClean, events: 3},
		{name: "--from trace forces the trace reader, with a hint", input: leakLog, args: []string{"--from", "trace"}, code: exitInput,
			stderr: `got '=' (this looks like a glibc mtrace log: read it with --from mtrace, or without --from)`},
		{name: "--from mtrace on a trace, with a hint", input: doubleFreeNoEnd, args: []string{"--from", "mtrace"}, code: exitInput,
			stderr: `(this looks like a tlcheck trace: read it with --from trace, or without --from)`},
		{name: "byte-order mark on a trace", input: "\ufeff" + doubleFreeNoEnd, code: exitInput,
			stderr: "starts with a UTF-8 byte-order mark (bytes EF BB BF)", notErr: "mtrace"},
		{name: "byte-order mark on a log", input: "\ufeff" + leakLog, code: exitInput,
			stderr: "starts with a UTF-8 byte-order mark (bytes EF BB BF), which glibc never writes"},
		{name: "empty log", input: "", args: []string{"--from", "mtrace"}, code: exitInput, stderr: "empty mtrace log"},
		{name: "blank log", input: "\n\n", args: []string{"--from", "mtrace"}, code: exitInput, stderr: "empty mtrace log"},
		{name: "empty input, detected as neither", input: "", code: exitInput, stderr: "header: empty input"},
		{name: "a line of a megabyte is quoted in part", input: long, code: exitInput,
			stderr: `:3: event 1: field "op": unknown operation "ZZZZ`},
	}
	for _, tt := range tests {
		for _, how := range []string{"file", "stdin", "pipe"} {
			t.Run(tt.name+"/"+how, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				e := &env{stdout: &stdout, stderr: &stderr}
				name := "-"
				switch how {
				case "file":
					name = writeFile(t, "input", tt.input)
				case "stdin":
					e.stdin = strings.NewReader(tt.input) // seekable, as a redirected file is
				case "pipe":
					e.stdin = pipe{strings.NewReader(tt.input)}
				}
				args := append(append([]string{"replay"}, tt.args...), name)
				code := run(e, append(args[:len(args):len(args)], "--json"))
				if code != tt.code {
					t.Fatalf("exit %d, want %d; stderr: %.500s", code, tt.code, stderr.String())
				}
				if code == exitInput {
					msg := stderr.String()
					if !strings.Contains(msg, tt.stderr) || tt.notErr != "" && strings.Contains(msg, tt.notErr) {
						t.Errorf("stderr %.500q, want it to say %q (and not %q)", msg, tt.stderr, tt.notErr)
					}
					// A line of the input, quoted, and a temporary path.
					if len(msg) > 300 {
						t.Errorf("stderr of %d bytes, want at most 300: %.500q", len(msg), msg)
					}
					return
				}
				var rep traces.Report
				if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
					t.Fatalf("--json: %v: %s", err, stdout.String())
				}
				if rep.Events != tt.events {
					t.Errorf("%d events, want %d", rep.Events, tt.events)
				}
				if tt.summary != "" && how == "file" {
					code, out, _ := tlcheck(false, append(append([]string{"replay"}, tt.args...), name)...)
					if code != tt.code {
						t.Errorf("human report: exit %d, want %d", code, tt.code)
					}
					assertLines(t, out, []string{tt.summary})
				}
			})
		}
	}
}
