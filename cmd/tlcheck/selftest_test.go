package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/hunt"
)

func TestSelftestJSON(t *testing.T) {
	report := filepath.Join(t.TempDir(), "detection.md")
	code, out, errOut := tlcheck(false, "selftest", "--json", "--time", "5s", "--report", report)
	if code != exitClean {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var got struct {
		Faults []hunt.Result `json:"faults"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields() // exactly Result's JSON fields
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	cat := impl.Catalog()
	if len(got.Faults) != len(cat) {
		t.Fatalf("%d faults, want %d", len(got.Faults), len(cat))
	}
	for i, f := range got.Faults {
		if f.Name != string(cat[i].Name) || f.Engine != cat[i].Engine || !f.Caught || f.Events <= 0 || f.Seconds <= 0 ||
			f.Size <= 0 || f.Unit == "" || f.Counterexample == "" {
			t.Errorf("fault %d: %+v; want %s caught, with its engine, a time and a counterexample in its unit", i, f, cat[i].Name)
		}
	}
	md, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cat {
		if !strings.Contains(string(md), "| `"+string(f.Name)+"` | "+f.Engine+" | yes |") {
			t.Errorf("report lacks the row of %s:\n%s", f.Name, md)
		}
	}
}

func TestSelftestTable(t *testing.T) {
	code, out, _ := tlcheck(false, "selftest", "--time", "5s", "--report", "")
	if code != exitClean {
		t.Fatalf("exit %d\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "fault ") || len(lines) != len(impl.Catalog())+2 {
		t.Fatalf("want a heading, a row per fault and a summary:\n%s", out)
	}
	n := len(impl.Catalog())
	if last, want := lines[len(lines)-1], fmt.Sprintf("%d of %d faults caught; median ", n, n); !strings.HasPrefix(last, want) ||
		!strings.HasSuffix(last, "with no failure") {
		t.Errorf("summary line %q, want %q... and a clean control", last, want)
	}
}

func TestSelftestUsage(t *testing.T) {
	for _, args := range [][]string{{"--time", "0s"}, {"--bogus"}, {"extra"}, {"--seed", "x"}} {
		if code, _, errOut := tlcheck(false, append([]string{"selftest"}, args...)...); code != exitInput || !strings.Contains(errOut, "usage: tlcheck selftest") {
			t.Errorf("selftest %v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// TestSelftestWritesNothingUnasked: run from the repository root with no
// --report, selftest writes no report (reports/gen regenerates
// reports/detection.md).
func TestSelftestWritesNothingUnasked(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("reports", 0o755); err != nil {
		t.Fatal(err)
	}
	opts, err := parseSelftestArgs([]string{"--time", "1ms"})
	if err != nil || opts.report != "" {
		t.Fatalf("with reports/ and no --report: report %q, %v; want none", opts.report, err)
	}
}

// TestSelftestReportRefusesForeignFile: --report replaces a report it
// wrote, and refuses, before hunting and with exit 2, any other file.
func TestSelftestReportRefusesForeignFile(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.jsonl")
	const content = `{"format":"tlcheck-trace","version":1}` + "\n"
	if err := os.WriteFile(trace, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := tlcheck(false, "selftest", "--time", "1ms", "--report", trace)
	if code != exitInput || !strings.Contains(errOut, "refusing to replace "+trace) {
		t.Errorf("exit %d, stderr %q; want exit 2, refusing to replace %s", code, errOut, trace)
	}
	if got, _ := os.ReadFile(trace); string(got) != content {
		t.Errorf("the trace was replaced: %q", got)
	}
	ours := filepath.Join(dir, "detection.md")
	if err := os.WriteFile(ours, []byte(hunt.MarkdownHeading+" ...\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := hunt.CheckReport(ours); err != nil {
		t.Errorf("a report selftest wrote: %v", err)
	}
	if err := hunt.CheckReport(filepath.Join(dir, "new.md")); err != nil {
		t.Errorf("a new file: %v", err)
	}
}
