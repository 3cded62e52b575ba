package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/traces"
)

// testdata/sarif-schema-2.1.0.json is the OASIS SARIF 2.1.0 schema
// (oasis-tcs/sarif-spec, Documents/CommitteeSpecifications/2.1.0/
// sarif-schema-2.1.0.json) with its description and default annotations
// left out to keep it small; every validation keyword is as published. It
// is read from the repository: no network at test time.
// The SARIF schema's URI, and the key of tlcheck's fingerprint in a
// result's partialFingerprints: fixed by the format and by the baselines
// viewers keep, so the tests spell them out.
const (
	sarifSchema    = "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
	fingerprintKey = "tlcheckFingerprint/v1"
)

func loadSARIFSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("the SARIF schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat() // uri-reference and date-time are checked, not just noted
	if err := c.AddResource(sarifSchema, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(sarifSchema)
	if err != nil {
		t.Fatalf("the SARIF schema: %v", err)
	}
	return s
}

func validateSARIF(s *jsonschema.Schema, text string) error {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// sarifOf decodes a SARIF log far enough for the tests to read it.
type sarifOf struct {
	Runs []struct {
		Tool struct {
			Driver struct {
				Rules []struct{ ID string }
			}
		}
		Invocations []struct {
			ExecutionSuccessful bool
			ExitCode            int
			Notifications       []struct {
				Level   string
				Message struct{ Text string }
			} `json:"toolExecutionNotifications"`
		}
		Results []struct {
			RuleID    string
			RuleIndex int
			Level     string
			Message   struct{ Text string }
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct{ URI string }
					Region           struct{ StartLine int }
				}
			}
			RelatedLocations []struct {
				ID      int
				Message struct{ Text string }
			}
			PartialFingerprints map[string]string
			BaselineState       string
			Suppressions        []struct{ Kind, Justification string }
		}
	}
}

func decodeSARIF(t *testing.T, text string) sarifOf {
	t.Helper()
	var s sarifOf
	if err := json.Unmarshal([]byte(text), &s); err != nil || len(s.Runs) != 1 {
		t.Fatalf("not a SARIF log with one run (%v):\n%s", err, text)
	}
	return s
}

// TestSARIFSchema validates the SARIF of every shipped trace, and of the
// cases that add to it (suppressions, a gate, an unreadable file, a trace
// without end, sites that are no file:line), against the official schema.
func TestSARIFSchema(t *testing.T) {
	schema := loadSARIFSchema(t)
	corpus, err := filepath.Glob(filepath.Join("..", "..", "traces", "testdata", "corpus", "*.jsonl"))
	if err != nil || len(corpus) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	p := files(t, "df.jsonl", doubleFreeNoEnd, "bad.jsonl", badOp, "supp.txt", "double-free:d.c:*\n",
		"odd.jsonl", oddSites, "base.json", "")
	df, bad, supp, odd, base := p[0], p[1], p[2], p[3], p[4]
	os.Remove(base)
	if code, _, stderr := runGateCmd("--baseline", base, "--update", df); code != exitClean {
		t.Fatalf("--update: exit %d: %s", code, stderr)
	}
	tests := []struct {
		name string
		args []string
	}{
		{"corpus", append([]string{"replay", "--format", "sarif"}, corpus...)},
		{"suppressed", []string{"replay", "--format", "sarif", "--suppressions", supp, df}},
		{"unreadable", []string{"replay", "--format", "sarif", bad, df}},
		{"require-end", []string{"replay", "--format", "sarif", "--require-end", df}},
		{"fail-on", []string{"replay", "--format", "sarif", "--fail-on", "leak", df}},
		{"odd sites", []string{"replay", "--format", "sarif", odd}},
		{"gate", []string{"gate", "--format", "sarif", "--baseline", base, df, odd}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stdout, _ := runCmd("", tt.args...)
			if err := validateSARIF(schema, stdout); err != nil {
				t.Errorf("invalid SARIF: %v\n%s", err, stdout)
			}
		})
	}
}

// TestSARIFSchemaCanFail shows that the validation is not vacuous: logs
// broken in ways a writer could break them are rejected.
func TestSARIFSchemaCanFail(t *testing.T) {
	schema := loadSARIFSchema(t)
	_, good, _ := runCmd(doubleFreeNoEnd, "replay", "--format", "sarif", "-")
	if err := validateSARIF(schema, good); err != nil {
		t.Fatalf("the good log is invalid: %v", err)
	}
	type obj = map[string]any
	result := func(log obj) obj {
		return log["runs"].([]any)[0].(obj)["results"].([]any)[0].(obj)
	}
	for _, tt := range []struct {
		name   string
		mutate func(log obj)
	}{
		{"wrong version", func(log obj) { log["version"] = "2.2.0" }},
		{"unknown level", func(log obj) { result(log)["level"] = "fatal" }},
		{"line 0", func(log obj) {
			result(log)["locations"].([]any)[0].(obj)["physicalLocation"].(obj)["region"].(obj)["startLine"] = 0
		}},
		{"message without text", func(log obj) { result(log)["message"] = obj{"txt": "x"} }},
		{"unknown result field", func(log obj) { result(log)["rule_id"] = "x" }},
		{"uri that is no URI", func(log obj) {
			result(log)["locations"].([]any)[0].(obj)["physicalLocation"].(obj)["artifactLocation"].(obj)["uri"] = "a b\\c%"
		}},
		{"no tool", func(log obj) { delete(log["runs"].([]any)[0].(obj), "tool") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log obj
			if err := json.Unmarshal([]byte(good), &log); err != nil {
				t.Fatal(err)
			}
			tt.mutate(log)
			bad, err := json.Marshal(log)
			if err != nil {
				t.Fatal(err)
			}
			if err := validateSARIF(schema, string(bad)); err == nil {
				t.Errorf("the schema accepts a log with %s", tt.name)
			}
		})
	}
}

// oddSites has sites that are no file:line: an mtrace caller, none, and
// one with a column.
const oddSites = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x20","size":16,"site":"./prog:[0x11ce]"}
{"op":"malloc","addr":"0x40","size":16}
{"op":"malloc","addr":"0x60","size":16,"site":"dir with space/k.c:7:3"}
{"op":"end"}
`

func TestSARIFContent(t *testing.T) {
	p := files(t, "df.jsonl", doubleFreeNoEnd, "odd.jsonl", oddSites, "supp.txt", "leak:./prog:*\n")
	df, odd, supp := p[0], p[1], p[2]

	_, stdout, _ := runCmd("", "replay", "--format", "sarif", df)
	s := decodeSARIF(t, stdout)
	run := s.Runs[0]
	if len(run.Tool.Driver.Rules) != len(traces.Kinds()) || run.Tool.Driver.Rules[0].ID != "double-free" {
		t.Errorf("rules: %+v; want every kind, in the contract's order", run.Tool.Driver.Rules)
	}
	if len(run.Results) != 1 {
		t.Fatalf("results: %+v", run.Results)
	}
	r := run.Results[0]
	loc := r.Locations[0].PhysicalLocation
	if r.RuleID != "double-free" || r.RuleIndex != 0 || r.Level != "error" ||
		loc.ArtifactLocation.URI != "d.c" || loc.Region.StartLine != 3 {
		t.Errorf("result: %+v", r)
	}
	if !strings.HasPrefix(r.Message.Text, "free of block #1") {
		t.Errorf("message %q: want the violation's message", r.Message.Text)
	}
	if len(r.RelatedLocations) != 2 || r.RelatedLocations[0].ID != 1 ||
		r.RelatedLocations[0].Message.Text != "allocated here: event 0" {
		t.Errorf("related locations: %+v", r.RelatedLocations)
	}
	want := check.Fingerprint{Kind: "double-free", Site: "d.c:3", AllocSite: "d.c:1"}.Hash() + ":1"
	if got := r.PartialFingerprints[fingerprintKey]; got != want {
		t.Errorf("fingerprint %q, want %q", got, want)
	}
	if inv := run.Invocations[0]; !inv.ExecutionSuccessful || inv.ExitCode != exitViolation ||
		len(inv.Notifications) != 1 || inv.Notifications[0].Level != "warning" {
		t.Errorf("invocation: %+v; want success, exit 1 and a warning for the missing end", inv)
	}

	// Sites that are no file:line fall back to the trace file and line.
	_, stdout, _ = runCmd("", "replay", "--format", "sarif", "--suppressions", supp, odd)
	s = decodeSARIF(t, stdout)
	var uris []string
	for _, r := range s.Runs[0].Results {
		pl := r.Locations[0].PhysicalLocation
		uris = append(uris, pl.ArtifactLocation.URI)
		if r.Level != "error" {
			t.Errorf("level %q", r.Level)
		}
	}
	// The leaks are reported at end (line 6), with the allocation's site
	// as the history; the result's own location is the end event's, which
	// has no site: the trace.
	for _, u := range uris {
		if !strings.HasSuffix(u, "odd.jsonl") {
			t.Errorf("location %q: want the trace file", u)
		}
	}
	res := s.Runs[0].Results
	if len(res) != 3 || len(res[0].Suppressions) != 1 || res[0].Suppressions[0].Kind != "external" ||
		!strings.Contains(res[0].Suppressions[0].Justification, "supp.txt:1") || len(res[1].Suppressions) != 0 {
		t.Errorf("want the first leak suppressed by supp.txt:1 and the others not: %+v", res)
	}
}

func runCmd(stdin string, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &stdout, stderr: &stderr}
	code := run(e, args)
	return code, stdout.String(), stderr.String()
}

// runGateCmd runs "tlcheck gate args...".
func runGateCmd(args ...string) (int, string, string) {
	return runCmd("", append([]string{"gate"}, args...)...)
}
