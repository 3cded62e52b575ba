package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/traces"
)

// manyLeaks is a trace whose invalid read comes first and whose leaks come
// from two sites, three blocks from a.c:1 and one bigger block from b.c:2.
const manyLeaks = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":16,"site":"a.c:1"}
{"op":"malloc","addr":"0x40","size":16,"site":"a.c:1"}
{"op":"malloc","addr":"0x70","size":16,"site":"a.c:1"}
{"op":"malloc","addr":"0x100","size":100,"site":"b.c:2"}
{"op":"read","addr":"0x9000","site":"c.c:3"}
{"op":"end"}
`

// TestMaxFindings: --max-findings bounds what is listed, never what is
// counted, what fails the run, or the leaks summed by site.
func TestMaxFindings(t *testing.T) {
	trace := files(t, "leaks.jsonl", manyLeaks)[0]
	tests := []struct {
		name string
		args []string
		code int
		want []string // lines that must appear, in order
		not  []string
	}{
		{"default lists all of a small trace, and sums the leaks by site", nil, exitViolation, []string{
			"ERROR: invalid-address at event 4",
			"ERROR: leak at event 5 (line 7): addr 0x100, object #4",
			"LEAKS BY SITE (biggest first):",
			"  100 bytes in 1 object allocated from b.c:2 (the first at event 3, line 5)",
			"  48 bytes in 3 objects allocated from a.c:1 (the first at event 0, line 2)",
			"SUMMARY: 5 violations: 1 invalid-address, 4 leak",
		}, []string{"not listed"}},
		{"a bound lists the first, counts the rest", []string{"--max-findings", "2"}, exitViolation, []string{
			"ERROR: invalid-address at event 4",
			"ERROR: leak at event 5 (line 7): addr 0x10, object #1",
			"  48 bytes in 3 objects allocated from a.c:1",
			"SUMMARY: 5 violations: 1 invalid-address, 4 leak",
			"  3 more violations not listed above (--max-findings 2; 0 lists all)",
		}, []string{"addr 0x40"}},
		{"unlisted violations still fail the run", []string{"--max-findings", "1", "--fail-on", "leak"}, exitViolation, []string{
			"WARNING: invalid-address at event 4",
			"SUMMARY: 5 violations: 1 invalid-address, 4 leak",
			"  4 more violations not listed above (--max-findings 1; 0 lists all)",
		}, []string{"ERROR: leak"}},
		{"a site list is bounded too", []string{"--max-findings", "1"}, exitViolation, []string{
			"  100 bytes in 1 object allocated from b.c:2",
			"  ... and 1 more site",
		}, []string{"allocated from a.c:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := replay("", append(tt.args, trace)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, stdout, stderr)
			}
			rest := stdout
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("stdout lacks %q (in order):\n%s", w, stdout)
				}
				rest = rest[i+len(w):]
			}
			for _, n := range tt.not {
				if strings.Contains(stdout, n) {
					t.Errorf("stdout has %q:\n%s", n, stdout)
				}
			}
		})
	}
	for _, n := range []string{"-3", "-1"} { // -1 too: no value means "unlimited" but 0
		if code, _, stderr := replay("", "--max-findings", n, trace); code != exitInput || !strings.Contains(stderr, "--max-findings "+n) {
			t.Errorf("--max-findings %s: exit %d, %q; want a usage error", n, code, stderr)
		}
	}
}

// TestMaxFindingsJSON: the JSON report lists every violation unless told
// otherwise, and always sums the leaks by site; with a bound it says how
// many of each kind it left out.
func TestMaxFindingsJSON(t *testing.T) {
	trace := files(t, "leaks.jsonl", manyLeaks)[0]
	type line struct {
		Violations []traces.Violation  `json:"violations"`
		Unlisted   map[traces.Kind]int `json:"unlisted"`
		LeakSites  []check.LeakSite    `json:"leak_sites"`
		Leaked     traces.Totals       `json:"leaked"`
	}
	sites := []check.LeakSite{{Site: "b.c:2", Objects: 1, Bytes: 100, Event: 3, Line: 5}, {Site: "a.c:1", Objects: 3, Bytes: 48, Event: 0, Line: 2}}
	for _, tt := range []struct {
		args     []string
		listed   int
		unlisted map[traces.Kind]int
	}{
		{nil, 5, nil},
		{[]string{"--max-findings", "0"}, 5, nil},
		{[]string{"--max-findings", "2"}, 2, map[traces.Kind]int{traces.Leak: 3}},
	} {
		t.Run(fmt.Sprint(tt.args), func(t *testing.T) {
			code, stdout, stderr := replay("", append(tt.args, "--json", trace)...)
			if code != exitViolation {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			var got line
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Violations) != tt.listed || !cmp.Equal(got.Unlisted, tt.unlisted) {
				t.Errorf("listed %d, unlisted %v; want %d, %v", len(got.Violations), got.Unlisted, tt.listed, tt.unlisted)
			}
			if diff := cmp.Diff(sites, got.LeakSites); diff != "" {
				t.Errorf("leak_sites (-want +got):\n%s", diff)
			}
			if got.Leaked != (traces.Totals{Objects: 4, Bytes: 148}) {
				t.Errorf("leaked %+v, want 4 objects, 148 bytes", got.Leaked)
			}
		})
	}
}
