package main

import (
	"encoding/xml"
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

// junitDoc decodes JUnit XML as CI systems read it.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Cases    []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestReplayJUnit(t *testing.T) {
	p := files(t, "clean.json", cleanDoc, "df.jsonl", doubleFreeNoEnd, "bad.jsonl", badOp, "leak.jsonl", twoLeaks)
	clean, df, bad, leak := p[0], p[1], p[2], p[3]
	code, stdout, _ := replay("", "--format", "junit", "--fail-on", "double-free", "--require-end", clean, df, bad, leak)
	if code != exitInput {
		t.Errorf("exit %d, want 2 (one file unreadable)", code)
	}
	if !strings.HasPrefix(stdout, "<?xml") {
		t.Errorf("no XML header:\n%s", stdout)
	}
	var doc junitDoc
	if err := xml.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, stdout)
	}
	if doc.Tests != 4 || doc.Failures != 1 || doc.Errors != 1 || len(doc.Suites) != 1 {
		t.Fatalf("totals: %+v", doc)
	}
	s := doc.Suites[0]
	if s.Name != "tlcheck replay" || s.Tests != 4 || s.Failures != 1 || s.Errors != 1 || len(s.Cases) != 4 {
		t.Fatalf("suite: %+v", s)
	}
	for i, want := range []string{clean, df, bad, leak} {
		if s.Cases[i].Name != want || s.Cases[i].Classname != "tlcheck.replay" {
			t.Errorf("case %d: %q %q, want %q", i, s.Cases[i].Name, s.Cases[i].Classname, want)
		}
	}
	if c := s.Cases[0]; c.Failure != nil || c.Error != nil || !strings.Contains(c.SystemOut, "OK: no violations") {
		t.Errorf("clean: %+v", c)
	}
	if c := s.Cases[1]; c.Failure == nil || c.Failure.Message != "1 violation, no end event (--require-end)" ||
		!strings.Contains(c.Failure.Text, "ERROR: double-free at event 2") {
		t.Errorf("double free: %+v", c)
	}
	if c := s.Cases[2]; c.Error == nil || !strings.Contains(c.Error.Message, "frobnicate") {
		t.Errorf("unreadable: %+v", c)
	}
	// Leaks pass under --fail-on double-free, and are still shown.
	if c := s.Cases[3]; c.Failure != nil || !strings.Contains(c.SystemOut, "WARNING: leak at event 4") {
		t.Errorf("leaks: %+v", c)
	}
}

// TestJUnitEscapes checks that text from a trace cannot break the XML.
func TestJUnitEscapes(t *testing.T) {
	trace := `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":8,"site":"<x>&\"]]>\u0001.c:1"}
{"op":"end"}
`
	p := files(t, "a&b<c>.jsonl", trace)
	_, stdout, _ := replay("", "--format", "junit", p[0])
	var doc junitDoc
	if err := xml.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, stdout)
	}
	c := doc.Suites[0].Cases[0]
	if c.Name != p[0] || c.Failure == nil || !strings.Contains(c.Failure.Text, `<x>&"]]>`) {
		t.Errorf("case %+v", c)
	}
}
