package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/internal/texttest"
	"github.com/tlcheck/tlcheck/traces"
)

// doubleFree is the report of a trace with one double free and one leak.
var doubleFree = traces.Report{
	Events: 9,
	Violations: []traces.Violation{
		{
			Kind: traces.DoubleFree, Event: 7, Line: 9, Site: "a.tl:3", Addr: 0x1000, Object: 2,
			Message: "release of object #2, which died at event 5",
			Related: []traces.Related{
				{Event: 5, Line: 7, What: "freed", Site: "a.tl:3"},
				{Event: 2, Line: 4, What: "allocated", Site: "a.tl:2"},
			},
		},
		{
			Kind: traces.Leak, Event: 8, Addr: 0x2000, Object: 3, Message: "object #3 is never released",
			Related: []traces.Related{{Event: 6, What: "allocated"}},
		},
	},
	Leaked:         traces.Totals{Objects: 1, Bytes: 64},
	StillReachable: traces.Totals{Objects: 2, Bytes: 1},
	Complete:       true,
	Objects:        3,
	PeakLiveBytes:  192,
}

func TestWriteHuman(t *testing.T) {
	tests := []struct {
		name string
		rep  traces.Report
		want []string // lines that must appear, in this order
		not  []string // text that must not appear
	}{
		{
			name: "violations with history",
			rep:  doubleFree,
			want: []string{
				"ERROR: double-free at event 7 (line 9, a.tl:3): addr 0x1000, object #2",
				"  release of object #2, which died at event 5",
				"    freed here: event 5 (line 7, a.tl:3)",
				"    allocated here: event 2 (line 4, a.tl:2)",
				"ERROR: leak at event 8: addr 0x2000, object #3",
				"    allocated here: event 6",
				"SUMMARY: 2 violations: 1 double-free, 1 leak",
				"  events 9, objects 3, peak live bytes 192",
				"  leaked 1 object (64 bytes), still reachable 2 objects (1 byte)",
			},
			not: []string{"\x1b[", "INCOMPLETE"},
		},
		{
			name: "misuse without an address, read of NULL",
			rep: traces.Report{Events: 3, Complete: true, Violations: []traces.Violation{
				{Kind: traces.Misuse, Event: 0, Line: 2, Message: "scope_exit with no scope"},
				{Kind: traces.InvalidAddress, Event: 1, Line: 3, Message: "read of NULL"},
			}},
			want: []string{
				"ERROR: misuse at event 0 (line 2)",
				"  scope_exit with no scope",
				"ERROR: invalid-address at event 1 (line 3): addr 0x0",
				"SUMMARY: 2 violations: 1 invalid-address, 1 misuse",
			},
		},
		{
			name: "clean",
			rep:  traces.Report{Events: 4, Complete: true, Objects: 1, PeakLiveBytes: 8},
			want: []string{
				"OK: no violations",
				"  events 4, objects 1, peak live bytes 8",
				"  leaked 0 objects (0 bytes), still reachable 0 objects (0 bytes)",
			},
			not: []string{"ERROR"},
		},
		{
			name: "incomplete: no leak totals",
			rep: traces.Report{Events: 2, Violations: []traces.Violation{
				{Kind: traces.UseAfterFree, Event: 1, Addr: 0x10, Message: "read of a freed block"},
			}},
			want: []string{
				"ERROR: use-after-free at event 1: addr 0x10",
				"SUMMARY: 1 violation: 1 use-after-free",
				"  INCOMPLETE: the trace stops without an end event, so no leak check ran",
			},
			not: []string{"leaked", "object #"},
		},
		{
			name: "incomplete with a missed free: no claim that no leak check ran",
			rep: traces.Report{Events: 3, Violations: []traces.Violation{
				{Kind: traces.Leak, Event: 1, Addr: 0x10, Message: "the runtime never freed object #1"},
			}},
			want: []string{
				"SUMMARY: 1 violation: 1 leak",
				"  INCOMPLETE: the trace stops without an end event, so what it still held was not checked for leaks (the leaks above are frees it missed on the way)",
			},
			not: []string{"no leak check ran", "leaked"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			TextReport(&b, tt.rep, false)
			texttest.Lines(t, b.String(), tt.want)
			for _, s := range tt.not {
				if strings.Contains(b.String(), s) {
					t.Errorf("report contains %q:\n%s", s, b.String())
				}
			}
		})
	}
}

func TestWriteHumanColour(t *testing.T) {
	var b bytes.Buffer
	TextReport(&b, doubleFree, true)
	if !strings.Contains(b.String(), "\x1b[1;31mERROR: double-free\x1b[0m at event 7") {
		t.Errorf("no colour in:\n%q", b.String())
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	JSONReport(&b, traces.Report{Events: 1, Complete: true, Violations: []traces.Violation{
		{Kind: traces.Misuse, Event: 0, Addr: 0, Message: "scope_exit with no scope"},
	}})
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
	}
	want := map[string]any{
		"events": 1.0,
		"violations": []any{map[string]any{
			"kind": "misuse", "event": 0.0, "addr": "0x0", "message": "scope_exit with no scope", "related": []any{},
		}},
		"leaked":          map[string]any{"objects": 0.0, "bytes": 0.0},
		"still_reachable": map[string]any{"objects": 0.0, "bytes": 0.0},
		"complete":        true,
		"objects":         0.0,
		"peak_live_bytes": 0.0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
	if strings.Count(b.String(), "\n") != 1 {
		t.Errorf("want one line, got %q", b.String())
	}
}

func TestWriteJSONEmptyLists(t *testing.T) {
	var b bytes.Buffer
	JSONReport(&b, traces.Report{})
	if !strings.Contains(b.String(), `"violations":[]`) {
		t.Errorf("violations not an empty list: %s", b.String())
	}
}
