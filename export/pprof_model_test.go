package export

import (
	"bytes"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// A missed free, then its free after a later call: whether it still counts
// as leaked is the model's call, and the profile must make the same.
const lateFree = `{"format":"tlcheck-trace","version":1,"effects":true}
{"op":"scope_enter","site":"step.tl:1"}
{"op":"alloc","addr":"0x1000","size":64,"site":"step.tl:2"}
{"op":"alloc","addr":"0x2000","size":32,"site":"step.tl:3"}
{"op":"release","addr":"0x1000","site":"step.tl:4"}
{"op":"malloc","addr":"0x3000","size":16,"site":"step.tl:5"}
{"op":"free","addr":"0x1000"}
{"op":"free","addr":"0x3000","site":"step.tl:6"}
{"op":"scope_exit","site":"step.tl:7"}
{"op":"end"}
`

// TestExportPprofTotalsMatchReport holds the profile's totals to the
// model's report: leaked objects and bytes, and the peak.
func TestExportPprofTotalsMatchReport(t *testing.T) {
	tests := []struct{ name, trace string }{
		{"sites", sitesTrace},
		{"stale reuse", staleReuse},
		{"hostile sites", hostileTrace},
		{"late free", lateFree},
		{"double frees", manyDoubleFrees(3)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := model.Replay(mustSource(t, tc.trace))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := Write(&buf, Pprof, mustSource(t, tc.trace), Options{Name: "t"}); err != nil {
				t.Fatal(err)
			}
			prof, err := profile.Parse(&buf)
			if err != nil {
				t.Fatal(err)
			}
			var leaked traces.Totals
			var peak int64
			for _, s := range prof.Sample {
				leaked.Objects += int(s.Value[1])
				leaked.Bytes += uint64(s.Value[0])
				peak += s.Value[2]
			}
			if leaked != rep.Leaked || uint64(peak) != rep.PeakLiveBytes {
				t.Errorf("the profile has leaked %+v and a peak of %d; the report %+v and %d", leaked, peak, rep.Leaked, rep.PeakLiveBytes)
			}
		})
	}
}
