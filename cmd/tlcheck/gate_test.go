package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/input"
)

// leakyV1 leaks one block made at main.c:5 and one at util.c:17.
const leakyV1 = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":64,"site":"main.c:5"}
{"op":"malloc","addr":"0x100","size":300,"site":"util.c:17"}
{"op":"end"}
`

// leakyV2 is the same program after unrelated edits: other addresses,
// more events, every line moved; the same leaks, matched by fingerprint.
const leakyV2 = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x9000","size":8,"site":"other.c:1"}
{"op":"free","addr":"0x9000","site":"other.c:2"}

{"op":"malloc","addr":"0x7000","size":300,"site":"util.c:17"}
{"op":"malloc","addr":"0x5000","size":64,"site":"main.c:5"}
{"op":"end"}
`

// leakyV3 leaks a second block at main.c:5: one new finding, by count.
const leakyV3 = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":64,"site":"main.c:5"}
{"op":"malloc","addr":"0x100","size":300,"site":"util.c:17"}
{"op":"malloc","addr":"0x400","size":64,"site":"main.c:5"}
{"op":"end"}
`

// leakyV4 has fixed the util.c:17 leak.
const leakyV4 = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":64,"site":"main.c:5"}
{"op":"end"}
`

// leakyV5 has a new kind of finding: a double free.
const leakyV5 = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x300","size":4,"site":"x.c:1"}
{"op":"free","addr":"0x300","site":"x.c:2"}
{"op":"free","addr":"0x300","site":"x.c:3"}
{"op":"malloc","addr":"0x10","size":64,"site":"main.c:5"}
{"op":"malloc","addr":"0x100","size":300,"site":"util.c:17"}
{"op":"end"}
`

// leakyV6 leaks the same things, but more bytes at the same sites.
const leakyV6 = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":70,"site":"main.c:5"}
{"op":"malloc","addr":"0x100","size":300,"site":"util.c:17"}
{"op":"end"}
`

// gateDir writes the trace content under the name the baseline knows,
// t.jsonl, in a fresh folder, makes the baseline b.json there from
// leakyV1, and returns the folder. The gate runs in that folder so that
// the trace's name is the same every time, as it is in CI.
func gateDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("t.jsonl", []byte(leakyV1), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runGateCmd("--baseline", "b.json", "--update", "t.jsonl"); code != exitClean ||
		!strings.Contains(stderr, "wrote b.json: 2 findings in 1 trace") {
		t.Fatalf("--update: exit %d, stderr %q", code, stderr)
	}
	return dir
}

func TestGate(t *testing.T) {
	tests := []struct {
		name   string
		trace  string
		args   []string
		code   int
		stdout []string // lines that must appear, in order
		not    []string // text that must not appear
	}{
		{"same run", leakyV1, nil, exitClean,
			[]string{"OK: no new findings (2 known)", "GATE: PASS: nothing beyond b.json (2 known)"}, []string{"ERROR"}},
		{"unrelated edits", leakyV2, nil, exitClean,
			[]string{"OK: no new findings (2 known)", "GATE: PASS: nothing beyond b.json (2 known)"}, []string{"ERROR"}},
		{"one more of a known fingerprint", leakyV3, nil, exitViolation,
			[]string{"ERROR: leak at event 3 (line 5): addr 0x400, object #3", "    allocated here: event 2 (line 4, main.c:5)",
				"SUMMARY: 1 new finding: 1 leak (2 known)", "GATE: FAIL: 1 new finding, 2 totals grown beyond the tolerance against b.json (2 known)"},
			[]string{"addr 0x10,"}},
		{"more leaked bytes, within the tolerance", leakyV3, []string{"--tolerance", "20%"}, exitViolation,
			[]string{"  leaked bytes 428 (baseline 364, allowed up to 436)", "GATE: FAIL: 1 new finding against b.json (2 known)"}, nil},
		{"fixed", leakyV4, nil, exitClean,
			[]string{"  FIXED: leak allocated at util.c:17, 1 fewer than the baseline accepts (--update tightens it)",
				"GATE: PASS: nothing beyond b.json (1 known, 1 fixed: --update tightens the baseline)"}, nil},
		{"new kind", leakyV5, nil, exitViolation,
			[]string{"ERROR: double-free at event 2 (line 4, x.c:3): addr 0x300, object #1", "GATE: FAIL: 1 new finding against b.json (2 known)"}, nil},
		{"new kind not in --fail-on", leakyV5, []string{"--fail-on", "leak"}, exitClean,
			[]string{"WARNING: double-free at event 2 (line 4, x.c:3): addr 0x300, object #1", "GATE: PASS: nothing beyond b.json (2 known)"}, nil},
		{"new finding suppressed", leakyV5, []string{"--suppressions", "supp.txt"}, exitClean,
			[]string{"SUPPRESSED: double-free at event 2 (line 4, x.c:3): addr 0x300, object #1, allocated at event 0 (line 2, x.c:1) by supp.txt:1 (double-free:x.c:*)",
				"OK: no new findings (2 known, 1 suppressed)"}, nil},
		{"leaked bytes grew", leakyV6, nil, exitViolation,
			[]string{"OK: no new findings (2 known)", "  leaked bytes 370 (baseline 364): grew beyond the tolerance",
				"  peak live bytes 370 (baseline 364): grew beyond the tolerance",
				"GATE: FAIL: 2 totals grown beyond the tolerance against b.json (2 known)"}, nil},
		{"growth within bytes", leakyV6, []string{"--tolerance", "6"}, exitClean,
			[]string{"  leaked bytes 370 (baseline 364, allowed up to 370)", "GATE: PASS: nothing beyond b.json (2 known)"}, nil},
		{"growth beyond bytes", leakyV6, []string{"--tolerance", "5"}, exitViolation,
			[]string{"  leaked bytes 370 (baseline 364, allowed up to 369): grew beyond the tolerance",
				"GATE: FAIL: 2 totals grown beyond the tolerance against b.json (2 known)"}, nil},
		{"growth within a percentage", leakyV6, []string{"--tolerance", "2%"}, exitClean,
			[]string{"  leaked bytes 370 (baseline 364, allowed up to 371)", "GATE: PASS: nothing beyond b.json (2 known)"}, nil},
		{"require-end", strings.TrimSuffix(leakyV1, `{"op":"end"}`+"\n"), []string{"--require-end"}, exitViolation,
			[]string{"GATE: FAIL: 1 trace without end against b.json"}, []string{"FIXED"}},
		// Without end no leak check runs: the leaks are not found, but
		// neither are they fixed.
		{"no end, not required", strings.TrimSuffix(leakyV1, `{"op":"end"}`+"\n"), nil, exitClean,
			[]string{"  INCOMPLETE: the trace stops without an end event, so no leak check ran", "GATE: PASS: nothing beyond b.json"},
			[]string{"FIXED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gateDir(t)
			if err := os.WriteFile("t.jsonl", []byte(tt.trace), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile("supp.txt", []byte("double-free:x.c:*\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runGateCmd(append([]string{"--baseline", "b.json", "t.jsonl"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tt.code, stderr)
			}
			assertLines(t, stdout, tt.stdout)
			for _, s := range tt.not {
				if strings.Contains(stdout, s) {
					t.Errorf("stdout has %q:\n%s", s, stdout)
				}
			}
		})
	}
}

func TestGateUsage(t *testing.T) {
	dir := gateDir(t)
	if err := os.WriteFile("notes.txt", []byte("my notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("bad.jsonl", []byte(badOp), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("s.txt", []byte("leak:*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no baseline flag", []string{"t.jsonl"}, exitInput, "--baseline FILE is required"},
		{"no traces", []string{"--baseline", "b.json"}, exitInput, "no traces to gate"},
		{"missing baseline", []string{"--baseline", "none.json", "t.jsonl"}, exitInput, "run with --update to create it"},
		{"not a baseline", []string{"--baseline", "notes.txt", "t.jsonl"}, exitInput, "notes.txt: not a tlcheck baseline"},
		{"update refuses a non-baseline", []string{"--baseline", "notes.txt", "--update", "t.jsonl"}, exitInput, "refusing to replace notes.txt"},
		{"update refuses a trace", []string{"--baseline", "t.jsonl", "--update", "t.jsonl"}, exitInput, "t.jsonl is one of the inputs"},
		{"update refuses a trace under another name", []string{"--baseline", filepath.Join(dir, "t.jsonl"), "--update", "./t.jsonl"}, exitInput, "is one of the inputs"},
		{"update refuses the suppressions", []string{"--baseline", "s.txt", "--suppressions", "s.txt", "--update", "t.jsonl"}, exitInput, "one of the inputs"},
		{"update with an unreadable trace", []string{"--baseline", "b.json", "--update", "t.jsonl", "bad.jsonl"}, exitInput, "b.json not written"},
		{"unreadable trace", []string{"--baseline", "b.json", "t.jsonl", "bad.jsonl"}, exitInput, "frobnicate"},
		{"a trace twice", []string{"--baseline", "b.json", "--update", "t.jsonl", "./t.jsonl"}, exitInput, "t.jsonl and ./t.jsonl name the same trace"},
		{"bad tolerance", []string{"--baseline", "b.json", "--tolerance", "lots", "t.jsonl"}, exitInput, `"lots"`},
		{"help", []string{"-h"}, exitClean, "usage: tlcheck gate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := os.ReadFile("b.json")
			notes, _ := os.ReadFile("notes.txt")
			trace, _ := os.ReadFile("t.jsonl")
			supp, _ := os.ReadFile("s.txt")
			code, _, stderr := runGateCmd(tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.stderr)
			}
			for name, was := range map[string][]byte{"b.json": before, "notes.txt": notes, "t.jsonl": trace, "s.txt": supp} {
				if now, _ := os.ReadFile(name); string(now) != string(was) {
					t.Errorf("%s changed", name)
				}
			}
		})
	}
}

// TestGateUpdate checks that --update writes what the run found, and
// that a run after it passes.
func TestGateUpdate(t *testing.T) {
	gateDir(t)
	os.WriteFile("t.jsonl", []byte(leakyV5), 0o644)
	os.WriteFile("u.jsonl", []byte(cleanDoc), 0o644)
	if code, _, _ := runGateCmd("--baseline", "b.json", "t.jsonl", "u.jsonl"); code != exitViolation {
		t.Fatalf("before --update: exit %d, want 1", code)
	}
	if code, _, stderr := runGateCmd("--baseline", "b.json", "--update", "t.jsonl", "./u.jsonl"); code != exitClean {
		t.Fatalf("--update: exit %d, %s", code, stderr)
	}
	got, _ := os.ReadFile("b.json")
	want := `{
  "format": "tlcheck-baseline",
  "version": 1,
  "traces": [
    {
      "trace": "t.jsonl",
      "complete": true,
      "leaked_bytes": 364,
      "peak_live_bytes": 364,
      "findings": [
        {"kind": "double-free", "site": "x.c:3", "alloc_site": "x.c:1", "count": 1},
        {"kind": "leak", "site": "", "alloc_site": "main.c:5", "count": 1},
        {"kind": "leak", "site": "", "alloc_site": "util.c:17", "count": 1}
      ]
    },
    {
      "trace": "u.jsonl",
      "complete": true,
      "leaked_bytes": 0,
      "peak_live_bytes": 8,
      "findings": []
    }
  ]
}
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("baseline (-want +got):\n%s", diff)
	}
	if code, stdout, _ := runGateCmd("--baseline", "b.json", "t.jsonl", "u.jsonl"); code != exitClean {
		t.Errorf("after --update: exit %d, want 0:\n%s", code, stdout)
	}
	// A trace of the baseline that is not given is named, not failed.
	code, stdout, _ := runGateCmd("--baseline", "b.json", "t.jsonl")
	if code != exitClean || !strings.Contains(stdout, "NOTE: the baseline's trace u.jsonl was not given: not compared") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
	// A trace the baseline does not know: every finding is new.
	os.WriteFile("v.jsonl", []byte(leakyV1), 0o644)
	code, stdout, _ = runGateCmd("--baseline", "b.json", "t.jsonl", "v.jsonl")
	if code != exitViolation || !strings.Contains(stdout, "NEW TRACE: not in the baseline") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

// TestGateJSON reads the gate's JSON: one object per trace, a line each.
// growthJSON is one total against the baseline in a gate's JSON report.
type growthJSON struct {
	Metric   string `json:"metric"`
	Baseline uint64 `json:"baseline"`
	Now      uint64 `json:"now"`
	Allowed  uint64 `json:"allowed"`
	Exceeded bool   `json:"exceeded"`
}

func TestGateJSON(t *testing.T) {
	gateDir(t)
	os.WriteFile("t.jsonl", []byte(leakyV3), 0o644)
	os.WriteFile("bad.jsonl", []byte(badOp), 0o644)
	code, stdout, _ := runGateCmd("--baseline", "b.json", "--json", "--tolerance", "20%", "t.jsonl", "bad.jsonl")
	if code != exitInput {
		t.Errorf("exit %d, want 2", code)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines:\n%s", stdout)
	}
	var got struct {
		File       string
		Violations []struct{ Kind string }
		Known      []struct{ Kind string }
		Fixed      []check.BaselineFinding
		InBaseline bool         `json:"in_baseline"`
		Growth     []growthJSON `json:"growth"`
		Verdict    string
		Reasons    []string
	}
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatal(err)
	}
	if got.File != "t.jsonl" || len(got.Violations) != 1 || len(got.Known) != 2 || len(got.Fixed) != 0 ||
		!got.InBaseline || got.Verdict != "fail" || !cmp.Equal(got.Reasons, []string{"1 new finding"}) {
		t.Errorf("%+v", got)
	}
	wantGrowth := []growthJSON{{"leaked_bytes", 364, 428, 436, false}, {"peak_live_bytes", 364, 428, 436, false}}
	if diff := cmp.Diff(wantGrowth, got.Growth); diff != "" {
		t.Errorf("growth (-want +got):\n%s", diff)
	}
	var bad map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &bad); err != nil || bad["file"] != "bad.jsonl" ||
		!strings.Contains(bad["error"].(string), "frobnicate") {
		t.Errorf("unreadable: %v %v", err, bad)
	}
}

func TestParseBaseline(t *testing.T) {
	tests := []struct {
		name, text, err string
	}{
		{"empty", `{"format":"tlcheck-baseline","version":1,"traces":[]}`, ""},
		{"not JSON", `nope`, "not a tlcheck baseline"},
		{"two values", `{"format":"tlcheck-baseline","version":1,"traces":[]} {}`, "more than one"},
		{"other format", `{"format":"tlcheck-trace","version":1,"traces":[]}`, `format "tlcheck-trace"`},
		{"other version", `{"format":"tlcheck-baseline","version":2,"traces":[]}`, "version 2"},
		{"unknown field", `{"format":"tlcheck-baseline","version":1,"traces":[],"extra":1}`, "extra"},
		{"no trace name", `{"format":"tlcheck-baseline","version":1,"traces":[{"findings":[]}]}`, "traces[0]: no trace name"},
		{"trace twice", `{"format":"tlcheck-baseline","version":1,"traces":[{"trace":"a"},{"trace":"a"}]}`, `traces[1]: trace "a" appears twice`},
		{"bad kind", `{"format":"tlcheck-baseline","version":1,"traces":[{"trace":"a","findings":[{"kind":"oops","count":1}]}]}`, `findings[0]: unknown kind "oops"`},
		{"count 0", `{"format":"tlcheck-baseline","version":1,"traces":[{"trace":"a","findings":[{"kind":"leak","count":0}]}]}`, "count 0"},
		{"finding twice", `{"format":"tlcheck-baseline","version":1,"traces":[{"trace":"a","findings":[{"kind":"leak","count":1},{"kind":"leak","count":2}]}]}`, "appears twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := check.ParseBaseline(strings.NewReader(tt.text))
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("error %v, want %q", err, tt.err)
			}
		})
	}
}

// TestBaselineRoundTrip: what check.NewBaseline writes, check.ParseBaseline reads
// back unchanged, and writing it again gives the same bytes.
func TestBaselineRoundTrip(t *testing.T) {
	p := files(t, "a.jsonl", leakyV5, "b.jsonl", `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":64,"site":"<\"quoted\" & odd>"}
{"op":"end"}
`)
	var outs []check.Outcome
	for _, name := range p {
		o := check.File(name, input.Options{Format: input.Trace}, &check.Policy{}, 0)
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		outs = append(outs, o)
	}
	b := check.NewBaseline(outs)
	text := b.Marshal()
	back, err := check.ParseBaseline(strings.NewReader(string(text)))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if diff := cmp.Diff(b, back, cmp.AllowUnexported(check.BaselineFinding{})); diff != "" {
		t.Errorf("round trip (-wrote +read):\n%s", diff)
	}
	if again := back.Marshal(); string(again) != string(text) {
		t.Errorf("not stable:\n%s\n%s", text, again)
	}
}

func TestFingerprint(t *testing.T) {
	p := files(t, "v1.jsonl", leakyV1, "v2.jsonl", leakyV2)
	var fps [2][]check.Fingerprint
	for i, name := range p {
		o := check.File(name, input.Options{Format: input.Trace}, &check.Policy{}, 0)
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		for j := range o.Report.Violations {
			fps[i] = append(fps[i], check.FingerprintOf(&o.Report.Violations[j]))
		}
	}
	want := []check.Fingerprint{{Kind: "leak", AllocSite: "main.c:5"}, {Kind: "leak", AllocSite: "util.c:17"}}
	if diff := cmp.Diff(want, fps[0]); diff != "" {
		t.Errorf("v1 (-want +got):\n%s", diff)
	}
	// v2 leaks the same things in the other order, at other addresses.
	if diff := cmp.Diff([]check.Fingerprint{want[1], want[0]}, fps[1]); diff != "" {
		t.Errorf("v2 (-want +got):\n%s", diff)
	}
	if want[0].Hash() == want[1].Hash() || len(want[0].Hash()) != 32 {
		t.Errorf("hashes %q %q", want[0].Hash(), want[1].Hash())
	}
}

// TestGateUpdateKeepsTheBaselineFile: --update writes a baseline that is a
// symbolic link through the link, keeps its permissions, and refuses a
// read-only one (exit 2, the file as it was).
func TestGateUpdateKeepsTheBaselineFile(t *testing.T) {
	gateDir(t)
	os.Rename("b.json", "real.json")
	os.Chmod("real.json", 0o600)
	os.Symlink("real.json", "b.json")
	os.WriteFile("t.jsonl", []byte(leakyV5), 0o644)
	if code, _, stderr := runGateCmd("--baseline", "b.json", "--update", "t.jsonl"); code != exitClean {
		t.Fatalf("--update through a link: exit %d, %s", code, stderr)
	}
	if st, _ := os.Lstat("b.json"); st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link became a %v", st.Mode())
	}
	if st, _ := os.Stat("real.json"); st.Mode().Perm() != 0o600 {
		t.Errorf("the baseline's mode became %v, want 0600", st.Mode().Perm())
	}
	if got, _ := os.ReadFile("real.json"); !strings.Contains(string(got), "double-free") {
		t.Errorf("the link's target was not updated:\n%s", got)
	}

	os.Chmod("real.json", 0o444)
	before, _ := os.ReadFile("real.json")
	os.WriteFile("t.jsonl", []byte(leakyV1), 0o644)
	code, stdout, stderr := runGateCmd("--baseline", "b.json", "--update", "t.jsonl")
	if code != exitInput || !strings.Contains(stderr, "read-only") || stdout != "" {
		t.Errorf("--update of a read-only baseline: exit %d, stderr %q, stdout %q; want 2 and a word on it, before any replay", code, stderr, stdout)
	}
	if after, _ := os.ReadFile("real.json"); string(after) != string(before) {
		t.Errorf("the read-only baseline changed")
	}
}

// TestGateUpdateKeepsWhatWasNotGiven checks that --update over some of
// the baseline's traces keeps the others as they were (an update of one
// job's traces must not drop another's accepted findings), and that only
// --prune removes them, naming each.
func TestGateUpdateKeepsWhatWasNotGiven(t *testing.T) {
	gateDir(t) // b.json accepts t.jsonl's two leaks
	os.WriteFile("u.jsonl", []byte(leakyV5), 0o644)
	if code, _, stderr := runGateCmd("--baseline", "b.json", "--update", "t.jsonl", "u.jsonl"); code != exitClean {
		t.Fatalf("--update: exit %d, %s", code, stderr)
	}
	both, _ := os.ReadFile("b.json")

	// Updating u.jsonl alone, unchanged, must leave t.jsonl's entry.
	code, stdout, stderr := runGateCmd("--baseline", "b.json", "--update", "u.jsonl")
	if code != exitClean {
		t.Fatalf("--update u.jsonl: exit %d, %s", code, stderr)
	}
	if now, _ := os.ReadFile("b.json"); string(now) != string(both) {
		t.Errorf("--update of u.jsonl alone changed the baseline:\n%s\nwant\n%s", now, both)
	}
	if !strings.Contains(stdout, "NOTE: the baseline's trace t.jsonl was not given: kept as it was") {
		t.Errorf("stdout does not say t.jsonl was kept:\n%s", stdout)
	}
	if !strings.Contains(stderr, "wrote b.json: 5 findings in 2 traces (1 not given, kept as it was)") {
		t.Errorf("stderr %q", stderr)
	}
	// Passing --prune without --update is a usage error: it prunes nothing.
	if code, _, stderr := runGateCmd("--baseline", "b.json", "--prune", "u.jsonl"); code != exitInput || !strings.Contains(stderr, "--prune needs --update") {
		t.Errorf("--prune alone: exit %d, %q", code, stderr)
	}
	// --prune removes what was not given, and says so.
	code, stdout, stderr = runGateCmd("--baseline", "b.json", "--update", "--prune", "u.jsonl")
	if code != exitClean {
		t.Fatalf("--prune: exit %d, %s", code, stderr)
	}
	if !strings.Contains(stdout, "NOTE: the baseline's trace t.jsonl was not given: removed (--prune)") ||
		!strings.Contains(stderr, "removed t.jsonl from b.json (not given; --prune), with its 2 accepted findings") ||
		!strings.Contains(stderr, "wrote b.json: 3 findings in 1 trace") {
		t.Errorf("--prune: stdout\n%s\nstderr %q", stdout, stderr)
	}
	b, err := check.ReadBaseline("b.json")
	if err != nil || len(b.Traces) != 1 || b.Traces[0].Trace != "u.jsonl" {
		t.Errorf("after --prune: %v %+v", err, b)
	}
}

// TestGateUpdateUnreadableVerdict pins the verdict of an --update that
// writes nothing because a trace is unreadable: it is a failure naming
// the unreadable trace, never "UPDATE: ... accepted into" a file that was
// not written.
func TestGateUpdateUnreadableVerdict(t *testing.T) {
	gateDir(t)
	if err := os.WriteFile("bad.jsonl", []byte(badOp), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile("b.json")
	code, stdout, stderr := runGateCmd("--baseline", "b.json", "--update", "t.jsonl", "bad.jsonl")
	if code != exitInput {
		t.Errorf("exit %d, want %d", code, exitInput)
	}
	if !strings.Contains(stdout, "GATE: FAIL: 1 unreadable trace against b.json") || strings.Contains(stdout, "GATE: UPDATE") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if !strings.Contains(stderr, "b.json not written") {
		t.Errorf("stderr %q", stderr)
	}
	if now, _ := os.ReadFile("b.json"); string(now) != string(before) {
		t.Errorf("b.json changed")
	}
}
