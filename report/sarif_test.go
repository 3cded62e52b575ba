package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/traces"
)

func TestParseSite(t *testing.T) {
	tests := []struct {
		site      string
		file      string
		line, col int
		ok        bool
	}{
		{"a.tl:42", "a.tl", 42, 0, true},
		{"src/x.c:7:3", "src/x.c", 7, 3, true},
		{`C:\src\x.c:9`, `C:\src\x.c`, 9, 0, true},
		{"./prog:[0x11ce]", "", 0, 0, false},
		{"a.tl", "", 0, 0, false},
		{"a.tl:0", "", 0, 0, false},
		{":5", "", 0, 0, false},
		{"", "", 0, 0, false},
	}
	for _, tt := range tests {
		file, line, col, ok := parseSite(tt.site)
		if file != tt.file || line != tt.line || col != tt.col || ok != tt.ok {
			t.Errorf("parseSite(%q) = %q %d %d %v, want %q %d %d %v", tt.site, file, line, col, ok, tt.file, tt.line, tt.col, tt.ok)
		}
	}
}

func TestFileURI(t *testing.T) {
	for path, want := range map[string]string{
		"a.c":          "a.c",
		"dir/sub/b.c":  "dir/sub/b.c",
		"with space.c": "with%20space.c",
		"/abs/c.c":     "/abs/c.c",
		"100%.c":       "100%25.c",
	} {
		if got := fileURI(path); got != want {
			t.Errorf("fileURI(%q) = %q, want %q", path, got, want)
		}
	}
}

// runCmd runs "tlcheck args..." with stdin and returns the exit code,
// stdout and stderr.

// TestEveryKindIsARule: the SARIF log has one rule per violation kind of
// the contract, each with its description: a kind added to traces/ fails
// here until ruleText describes it.
func TestEveryKindIsARule(t *testing.T) {
	var b strings.Builder
	writeSARIF(&b, nil, &check.Policy{}, Run{Command: "replay"})
	var log sarifLog
	if err := json.Unmarshal([]byte(b.String()), &log); err != nil {
		t.Fatal(err)
	}
	rules := log.Runs[0].Tool.Driver.Rules
	if len(rules) != len(traces.Kinds()) {
		t.Fatalf("%d rules for %d kinds", len(rules), len(traces.Kinds()))
	}
	for i, k := range traces.Kinds() {
		if rules[i].ID != string(k) || rules[i].ShortDescription.Text == "" {
			t.Errorf("rule %d: %+v; want kind %s with a description (ruleText, sarif.go)", i, rules[i], k)
		}
	}
}

// TestSARIFSaysWhyNoLeakCheckRan: a trace without end and a snapshot (taken
// mid-run) each get the reason the text report gives them.
func TestSARIFSaysWhyNoLeakCheckRan(t *testing.T) {
	outs := []check.Outcome{{File: "cut.jsonl"}, {File: "snap.pickle", Snapshot: true}}
	var b strings.Builder
	writeSARIF(&b, outs, &check.Policy{}, Run{Command: "replay"})
	for _, want := range []string{"cut.jsonl: the trace stops without an end event", "snap.pickle: a memory snapshot is taken mid-run"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, b.String())
		}
	}
}
