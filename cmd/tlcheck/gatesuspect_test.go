package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/internal/snapgen"
)

// Under --fail-on leak-suspect a snapshot's leak suspects are findings:
// new ones fail the gate, --update accepts them, and a run without the
// flag neither compares nor drops them.
func TestGateLeakSuspects(t *testing.T) {
	dir := t.TempDir()
	loss := writeSnapshot(t, dir, "loss.pickle", snapgen.Config{Loop: snapgen.KeepLoss})
	train := writeSnapshot(t, dir, "train.pickle", snapgen.Config{Loop: snapgen.Train})
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, check.EmptyBaseline().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, "base.json")
	// A loop of a trace without an end that keeps a block an iteration.
	var text strings.Builder
	text.WriteString(`{"format":"tlcheck-trace","version":1}` + "\n")
	for i := range 10 {
		fmt.Fprintf(&text, `{"op":"malloc","addr":"0x1000","size":64,"site":"loop.c:1"}`+"\n")
		fmt.Fprintf(&text, `{"op":"malloc","addr":"0x%x","size":8,"site":"keep.c:2"}`+"\n", 0x2000+16*i)
		fmt.Fprintf(&text, `{"op":"free","addr":"0x1000"}`+"\n")
	}
	loop := filepath.Join(dir, "loop.jsonl")
	if err := os.WriteFile(loop, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tlcheck := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := run(&env{stdout: &stdout, stderr: &stderr}, args)
		return code, stdout.String()
	}
	suspectLine := "LEAK SUSPECT: " + snapgen.LossSite + " keeps 1 block"
	for _, c := range []struct {
		name    string
		args    []string
		code    int
		want    []string
		notWant []string
	}{
		{"new suspect fails", []string{"gate", "--baseline", empty, "--fail-on", "leak-suspect", loss}, exitViolation,
			[]string{"SUMMARY: 1 new finding: 1 leak-suspect", suspectLine, "1 new finding", "GATE: FAIL"}, nil},
		{"without the flag no search", []string{"gate", "--baseline", empty, loss}, exitClean,
			[]string{"GATE: PASS"}, []string{"LEAK SUSPECT"}},
		{"a loop that keeps nothing", []string{"gate", "--baseline", empty, "--fail-on", "leak-suspect", train}, exitClean,
			[]string{"NO LEAK SUSPECT", "GATE: PASS"}, nil},
		{"update accepts", []string{"gate", "--baseline", base, "--update", "--fail-on", "leak-suspect", loss}, exitClean, nil, nil},
		{"accepted passes", []string{"gate", "--baseline", base, "--fail-on", "leak-suspect", loss}, exitClean,
			[]string{"KNOWN " + suspectLine, "GATE: PASS", "1 known"}, nil},
		{"update without the flag keeps it", []string{"gate", "--baseline", base, "--update", loss}, exitClean, nil, nil},
		{"still accepted", []string{"gate", "--baseline", base, "--fail-on", "leak-suspect", loss}, exitClean,
			[]string{"KNOWN " + suspectLine, "GATE: PASS"}, []string{"FIXED"}},
		{"with other kinds", []string{"gate", "--baseline", empty, "--fail-on", "leak,leak-suspect", loss}, exitViolation,
			[]string{suspectLine, "GATE: FAIL"}, nil},
		{"replay lists and fails", []string{"replay", "--fail-on", "leak-suspect", loss}, exitViolation,
			[]string{"SUMMARY: 1 finding: 1 leak-suspect", suspectLine}, nil},
		{"replay lists a snapshot's without failing", []string{"replay", loss}, exitClean, []string{"OK: no violations", suspectLine}, nil},
		{"replay of a loop that keeps nothing", []string{"replay", train}, exitClean, []string{"NO LEAK SUSPECT"}, nil},
		{"replay of a trace not a snapshot", []string{"replay", loop}, exitClean, nil, []string{"LEAK SUSPECT"}},
		{"replay fails on a trace's with the flag", []string{"replay", "--fail-on", "leak-suspect", loop}, exitViolation, []string{"LEAK SUSPECT: keep.c:2"}, nil},
		{"unknown kind", []string{"gate", "--baseline", empty, "--fail-on", "leak-suspects", loss}, exitInput, nil, nil},
	} {
		code, out := tlcheck(c.args...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s", c.name, code, c.code, out)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", c.name, w, out)
			}
		}
		for _, w := range c.notWant {
			if strings.Contains(out, w) {
				t.Errorf("%s: %q in\n%s", c.name, w, out)
			}
		}
		if c.name == "update without the flag keeps it" {
			b, err := check.ReadBaseline(base)
			if err != nil {
				t.Fatal(err)
			}
			if f := b.Traces[0].Findings; len(f) != 1 || f[0].Kind != check.LeakSuspect || f[0].AllocSite != snapgen.LossSite {
				t.Errorf("%s: baseline findings %+v, want the loss's suspect", c.name, f)
			}
		}
	}

	code, out := tlcheck("gate", "--json", "--baseline", empty, "--fail-on", "leak-suspect", loss)
	var line struct {
		LeakSuspects []struct {
			Site  string `json:"site"`
			Known bool   `json:"known"`
		} `json:"leak_suspects"`
		Verdict string   `json:"verdict"`
		Reasons []string `json:"reasons"`
	}
	if err := json.Unmarshal([]byte(out), &line); err != nil || code != exitViolation {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	if len(line.LeakSuspects) != 1 || line.LeakSuspects[0].Site != snapgen.LossSite || line.LeakSuspects[0].Known || line.Verdict != "fail" {
		t.Errorf("--json: %+v", line)
	}
}

// A gate's SARIF gives each suspect a result under the rule
// leak-suspect, an error since it fails, new or unchanged, and stays
// valid SARIF.
func TestGateLeakSuspectsSARIF(t *testing.T) {
	dir := t.TempDir()
	loss := writeSnapshot(t, dir, "loss.pickle", snapgen.Config{Loop: snapgen.KeepLoss})
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, check.EmptyBaseline().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(&env{stdout: &stdout, stderr: &stderr}, []string{"gate", "--format", "sarif", "--baseline", empty, "--fail-on", "leak-suspect", loss})
	if code != exitViolation {
		t.Fatalf("exit %d, want %d: %s", code, exitViolation, stderr.String())
	}
	if err := validateSARIF(loadSARIFSchema(t), stdout.String()); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID string }
				}
			}
			Results []struct {
				RuleID        string
				RuleIndex     int
				Level         string
				BaselineState string
			}
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	r := log.Runs[0]
	if len(r.Results) != 1 {
		t.Fatalf("results %+v, want the suspect's", r.Results)
	}
	got := r.Results[0]
	if got.RuleID != "leak-suspect" || got.Level != "error" || got.BaselineState != "new" || r.Tool.Driver.Rules[got.RuleIndex].ID != "leak-suspect" {
		t.Errorf("result %+v (rules %+v), want a new leak-suspect error pointing at its rule", got, r.Tool.Driver.Rules)
	}
}
