package main

import (
	"strings"
	"testing"
)

// TestReplayPolicyFlags checks --fail-on, --require-end and --format on
// replay: the exit code, and what stderr and stdout must say.
func TestReplayPolicyFlags(t *testing.T) {
	p := files(t, "df.jsonl", doubleFreeNoEnd, "leak.jsonl", twoLeaks, "clean.json", cleanDoc)
	df, leak, clean := p[0], p[1], p[2]
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // lines that must appear, in order
		stderr string   // a part of stderr; "" for empty
	}{
		{"fail-on other kind: reported, exit 0", []string{"--fail-on", "leak", df}, exitClean,
			[]string{"WARNING: double-free at event 2 (line 4, d.c:3): addr 0x20, object #1", "SUMMARY: 1 violation: 1 double-free"}, ""},
		{"fail-on its kind", []string{"--fail-on", "leak,double-free", df}, exitViolation,
			[]string{"ERROR: double-free at event 2 (line 4, d.c:3): addr 0x20, object #1"}, ""},
		{"fail-on repeated adds up", []string{"--fail-on", "leak", "--fail-on", "double-free", df}, exitViolation, nil, ""},
		{"fail-on with spaces", []string{"--fail-on", " leak , misuse ", leak}, exitViolation, nil, ""},
		{"fail-on unknown kind", []string{"--fail-on", "leak,dubble-free", df}, exitInput, nil, `unknown kind "dubble-free"`},
		{"fail-on nothing", []string{"--fail-on", ",", df}, exitInput, nil, "no kind named"},
		{"require-end on a trace without end", []string{"--require-end", "--fail-on", "leak", df}, exitViolation,
			[]string{"  INCOMPLETE: the trace stops without an end event, so no leak check ran; --require-end fails it"},
			df + ": the trace stops without an end event, and --require-end demands one"},
		{"require-end on a complete trace", []string{"--require-end", clean}, exitClean, []string{"OK: no violations"}, ""},
		{"without require-end", []string{"--fail-on", "leak", df}, exitClean,
			[]string{"  INCOMPLETE: the trace stops without an end event, so no leak check ran"}, ""},
		{"format unknown", []string{"--format", "xml", df}, exitInput, nil, `--format "xml"`},
		{"json and another format", []string{"--json", "--format", "sarif", df}, exitInput, nil, "contradict"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := replay("", tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			assertLines(t, stdout, tt.stdout)
			if tt.stderr == "" && stderr != "" || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr, tt.stderr)
			}
		})
	}
}
