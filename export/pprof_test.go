package export

import (
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/traces"
)

// TestExportPprofPeak checks the peak's shares where the peak is reached
// more than once and sites change between: each site's share is what it
// held at the last (highest) peak, and the shares add up to the peak.
func TestExportPprofPeak(t *testing.T) {
	tests := []struct {
		name  string
		trace string
		want  map[string]int64 // peak_live_bytes by site
	}{
		{"a later, higher peak replaces the first", `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x100","size":100,"site":"x:1"}
{"op":"free","addr":"0x100"}
{"op":"malloc","addr":"0x200","size":150,"site":"y:1"}
{"op":"end"}
`, map[string]int64{"x:1": 0, "y:1": 150}},
		{"a site that changed between peaks", `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x100","size":100,"site":"x:1"}
{"op":"malloc","addr":"0x200","size":10,"site":"y:1"}
{"op":"free","addr":"0x200"}
{"op":"malloc","addr":"0x300","size":20,"site":"x:1"}
{"op":"free","addr":"0x300"}
{"op":"end"}
`, map[string]int64{"x:1": 120, "y:1": 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPprof(io.Discard)
			if _, err := run(mustSource(t, tc.trace), p, Options{}); err != nil {
				t.Fatal(err)
			}
			got := map[string]int64{}
			var sum int64
			for site, s := range p.sites {
				got[site] = s.peakBytes
				sum += s.peakBytes
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("peak_live_bytes (-want +got):\n%s", diff)
			}
			if uint64(sum) != p.peak {
				t.Errorf("shares add up to %d, the peak is %d", sum, p.peak)
			}
		})
	}
}

func TestSplitSite(t *testing.T) {
	tests := []struct {
		site string
		file string
		line int64
	}{
		{"a.c:12", "a.c", 12},
		{"C:/src/a.c:3", "C:/src/a.c", 3},
		{"./prog:[0x11ce]", "", 0},
		{"main.go:0", "", 0},
		{":7", "", 0},
		{"noline", "", 0},
	}
	for _, tc := range tests {
		if file, line := splitSite(tc.site); file != tc.file || line != tc.line {
			t.Errorf("splitSite(%q) = %q, %d; want %q, %d", tc.site, file, line, tc.file, tc.line)
		}
	}
}

// mustSource reads a trace held in a string.
func mustSource(t *testing.T, trace string) traces.Source {
	t.Helper()
	r, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
