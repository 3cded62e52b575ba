package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/impl"
)

func TestSelftestJSON(t *testing.T) {
	report := filepath.Join(t.TempDir(), "detection.md")
	code, out, errOut := tlcheck(false, "selftest", "--json", "--time", "5s", "--report", report)
	if code != exitClean {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var got struct {
		Faults []huntResult `json:"faults"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields() // exactly name, caught, seconds, events
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	cat := impl.Catalog()
	if len(got.Faults) != len(cat) {
		t.Fatalf("%d faults, want %d", len(got.Faults), len(cat))
	}
	for i, f := range got.Faults {
		if f.Name != string(cat[i].Name) || !f.Caught || f.Events <= 0 || f.Seconds <= 0 {
			t.Errorf("fault %d: %+v; want %s caught, with a trace and a time", i, f, cat[i].Name)
		}
	}
	md, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cat {
		if !strings.Contains(string(md), "| `"+string(f.Name)+"` | yes |") {
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

// TestSelftestHuntsEveryEngine: every engine of the catalog has a hunter
// in selftest; a fault whose engine has none would be reported "no
// engine hunts ... faults" and never caught.
func TestSelftestHuntsEveryEngine(t *testing.T) {
	for _, f := range impl.Catalog() {
		if _, ok := hunters[f.Engine]; !ok {
			t.Errorf("fault %s: no engine hunts %s faults (add the engine to hunters, selftest.go)", f.Name, f.Engine)
		}
	}
	r := huntFault(impl.FaultInfo{Name: "x", Engine: "no-such-engine"}, selftestOptions{time: time.Millisecond})
	if r.Caught || r.property != "no engine hunts no-such-engine faults" {
		t.Errorf("a fault of an unknown engine: %+v, want not caught and the engine named", r)
	}
}

// TestSelftestAutograd: each autograd fault is caught by the autograd
// hunter, shrunk to a few steps; the correct engine is not.
func TestSelftestAutograd(t *testing.T) {
	opts := selftestOptions{seed: 1, time: 2 * time.Second}
	for _, f := range impl.Catalog() {
		if f.Engine != impl.EngineAutograd {
			continue
		}
		r := huntFault(f, opts)
		if !r.Caught || r.Events <= 0 || r.steps <= 0 || r.steps > 8 || r.autogradProgram == "" {
			t.Errorf("fault %s: %+v; want caught, shrunk to at most 8 steps", f.Name, r)
		}
	}
	if c := huntAutograd(nil, "none", selftestOptions{seed: 1, time: 200 * time.Millisecond}); c.Caught || c.programs == 0 {
		t.Errorf("control: %+v; want programs run and none failing", c)
	}
}

func TestSelftestUsage(t *testing.T) {
	for _, args := range [][]string{{"--time", "0s"}, {"--bogus"}, {"extra"}, {"--seed", "x"}} {
		if code, _, errOut := tlcheck(false, append([]string{"selftest"}, args...)...); code != exitInput || !strings.Contains(errOut, "usage: tlcheck selftest") {
			t.Errorf("selftest %v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

func TestSelftestDefaultReport(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	opts, err := parseSelftestArgs(nil)
	if err != nil || opts.report != "" {
		t.Fatalf("without reports/: report %q, %v; want none", opts.report, err)
	}
	if err := os.Mkdir("reports", 0o755); err != nil {
		t.Fatal(err)
	}
	if opts, _ := parseSelftestArgs(nil); opts.report != defaultReport {
		t.Errorf("with reports/: report %q, want %q", opts.report, defaultReport)
	}
	if opts, _ := parseSelftestArgs([]string{"--report", ""}); opts.report != "" {
		t.Errorf(`--report "": report %q, want none`, opts.report)
	}
}
