package export_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/tlcheck/tlcheck/export"
	"github.com/tlcheck/tlcheck/traces"
)

// The exports' numbers held to the model's at the boundaries of their
// units: bytes shown as KiB, MiB, ... in the HTML page, the profile's
// byte totals, and the Perfetto timeline's µs, written from the trace's
// ns. The values are generated around each boundary, so that an
// off-by-one in a comparison or a digit lost in a conversion shows at
// one of them.

// byteBoundaries are sizes around each power of 1024, and around the
// points where one decimal of the smaller unit rounds up to 1024 of it.
func byteBoundaries() []uint64 {
	ns := []uint64{1, 2, 1000}
	for k := 1; k <= 5; k++ {
		u := uint64(1) << (10 * k)
		ns = append(ns, u-1, u, u+1, u+u/2, u-u/20/1024, u-u/20/1024-1)
	}
	return ns
}

// exportOf writes trace as format f and returns what was written and the
// model's verdict.
func exportOf(t *testing.T, f export.Format, trace string) ([]byte, *export.Summary) {
	t.Helper()
	r, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		t.Fatalf("%v\n%s", err, trace)
	}
	var out bytes.Buffer
	sum, err := export.Write(&out, f, r, export.Options{Name: "units"})
	if err != nil {
		t.Fatalf("%v\n%s", err, trace)
	}
	return out.Bytes(), sum
}

// sizeTrace makes an 8-byte block and frees it, then makes n bytes,
// which leak: the peak is n bytes (8 below 8).
func sizeTrace(n uint64) string {
	return fmt.Sprintf(`{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":8,"site":"b.c:2"}
{"op":"free","addr":"0x10"}
{"op":"malloc","addr":"0x1000","size":%d,"site":"a.c:1"}
{"op":"end"}
`, n)
}

// TestExportHTMLMiB: exactly 1 MiB is "1.0 MiB (1048576 bytes)".
func TestExportHTMLMiB(t *testing.T) {
	page, _ := exportOf(t, export.HTML, sizeTrace(1<<20))
	if want := "peak 1.0 MiB (1048576 bytes)"; !bytes.Contains(page, []byte(want)) {
		t.Errorf("the page lacks %q:\n%s", want, figcaptions.FindAll(page, -1))
	}
}

var (
	figcaptions = regexp.MustCompile(`<figcaption>heap: peak (.*?), at the end (.*?)</figcaption>`)
	yAxis       = regexp.MustCompile(`<div class="yaxis" aria-hidden="true"><span>(.*?)</span><span>(.*?)</span>`)
	shownBytes  = regexp.MustCompile(`^(?:(\d+) bytes?|(\d+) B|(\d+\.\d) ([KMGTPE]iB)(?: \((\d+) bytes?\))?)$`)
)

// checkShown checks that text shows n bytes: exactly where it is under
// 1 KiB; else in the largest unit that leaves at least 1.0 of it, as a
// number below 1024 with one decimal that is n rounded, and (withExact)
// n exactly in parentheses.
func checkShown(text string, n uint64, withExact bool) error {
	m := shownBytes.FindStringSubmatch(text)
	if m == nil {
		return fmt.Errorf("%q is not a number of bytes", text)
	}
	if m[1] != "" || m[2] != "" {
		if got := m[1] + m[2]; n >= 1024 || got != strconv.FormatUint(n, 10) {
			return fmt.Errorf("%q shows %d bytes", text, n)
		}
		if m[1] != "" && (n == 1) != (text == "1 byte") {
			return fmt.Errorf("%q: 1 byte, other numbers bytes", text)
		}
		return nil
	}
	if (m[5] != "") != withExact || withExact && m[5] != strconv.FormatUint(n, 10) {
		return fmt.Errorf("%q shows %d bytes: want the exact number %t", text, n, withExact)
	}
	k := strings.Index("KMGTPE", m[4][:1]) + 1
	unit := math.Pow(1024, float64(k))
	v, _ := strconv.ParseFloat(m[3], 64)
	if exact := float64(n) / unit; math.Abs(v-exact) > 0.05+1e-9 {
		return fmt.Errorf("%q shows %d bytes: %s %s is not %d rounded (%.3f)", text, n, m[3], m[4], n, exact)
	}
	if v >= 1024 && m[4] != "EiB" || v < 1 {
		return fmt.Errorf("%q shows %d bytes: %s is not between 1.0 and 1023.9 of its unit", text, n, m[3])
	}
	return nil
}

// TestExportHTMLUnits: the page's peak, live bytes at the end and y axis
// labels (the peak and half of it) show the model's numbers, at every
// byte boundary.
func TestExportHTMLUnits(t *testing.T) {
	for _, n := range byteBoundaries() {
		page, sum := exportOf(t, export.HTML, sizeTrace(n))
		if sum.Report.PeakLiveBytes != max(n, 8) || sum.Report.Leaked.Bytes != n {
			t.Fatalf("%d bytes: the model's peak is %d and leaked %d", n, sum.Report.PeakLiveBytes, sum.Report.Leaked.Bytes)
		}
		fig := figcaptions.FindSubmatch(page)
		axis := yAxis.FindSubmatch(page)
		if fig == nil || axis == nil {
			t.Fatalf("%d bytes: no heap plot with its caption and axis", n)
		}
		peak := sum.Report.PeakLiveBytes
		for _, c := range []struct {
			what  string
			text  []byte
			n     uint64
			exact bool
		}{
			{"peak", fig[1], peak, true},
			{"at the end", fig[2], n, true},
			{"axis top", axis[1], peak, false},
			{"axis middle", axis[2], peak / 2, false},
		} {
			if err := checkShown(string(c.text), c.n, c.exact); err != nil {
				t.Errorf("%d bytes allocated, %s: %v", n, c.what, err)
			}
		}
	}
}

// TestExportPprofUnits: the profile's byte totals are the model's, at
// every byte boundary.
func TestExportPprofUnits(t *testing.T) {
	for _, n := range byteBoundaries() {
		data, sum := exportOf(t, export.Pprof, sizeTrace(n))
		p, err := profile.Parse(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		totals := map[string]int64{}
		for _, s := range p.Sample {
			for i, st := range p.SampleType {
				totals[st.Type] += s.Value[i]
			}
		}
		want := map[string]int64{
			"leaked_bytes":    int64(sum.Report.Leaked.Bytes),
			"peak_live_bytes": int64(sum.Report.PeakLiveBytes),
			"alloc_bytes":     int64(n + 8),
		}
		for k, w := range want {
			if totals[k] != w {
				t.Errorf("%d bytes allocated: %s totals %d, want %d (the model's)", n, k, totals[k], w)
			}
		}
	}
}

// timeBoundaries are ns times around each µs, where the timeline's
// decimals are cut, and at the ends of t's range.
func timeBoundaries() []int64 {
	ts := []int64{1, 5, 10, 100, 999, 1000, 1001, 1005, 1010, 1050, 1100, 1999, 2000, 999_999, 1_000_000, 1_000_001,
		1_234_567_891, math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 999}
	for _, t := range ts[:len(ts):len(ts)] {
		ts = append(ts, -t)
	}
	return append(ts, math.MinInt64, math.MinInt64+1)
}

// timedTrace is five events at times ts: a block made, freed, freed
// again (a double-free, an instant event), a block made that leaks, and
// end.
func timedTrace(ts [5]int64) string {
	return fmt.Sprintf(`{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x100","size":8,"t":%d}
{"op":"free","addr":"0x100","t":%d}
{"op":"free","addr":"0x100","t":%d}
{"op":"malloc","addr":"0x200","size":16,"t":%d}
{"op":"end","t":%d}
`, ts[0], ts[1], ts[2], ts[3], ts[4])
}

// TestExportPerfettoTS: an event at 1005 ns is at 1.005 µs.
func TestExportPerfettoTS(t *testing.T) {
	data, _ := exportOf(t, export.Perfetto, timedTrace([5]int64{1005, 1006, 1007, 1008, 1009}))
	if !bytes.Contains(data, []byte(`"ts":1.005,`)) {
		t.Errorf("no event at \"ts\":1.005 in\n%s", data)
	}
}

// TestExportPerfettoTimes: every event of the timeline is at its
// event's t, as an exact decimal number of µs, for times at every
// boundary.
func TestExportPerfettoTimes(t *testing.T) {
	bs := timeBoundaries()
	for i := range bs {
		var ts [5]int64
		for j := range ts {
			ts[j] = bs[(i+j)%len(bs)]
		}
		data, _ := exportOf(t, export.Perfetto, timedTrace(ts))
		if err := checkTimes(data, ts[:]); err != nil {
			t.Errorf("times %v: %v", ts, err)
		}
	}
}

// checkTimes checks each event of a timeline against the time of the
// event it names: a life's start (made_at_event), end (ended_at_event,
// or the last event for one live at the end), a violation's event; a
// counter must be at one of the times.
func checkTimes(data []byte, ts []int64) error {
	var doc struct {
		TraceEvents []struct {
			Ph   string
			Name string
			TS   *json.Number
			Args map[string]any
		}
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	checked := 0
	for _, ev := range doc.TraceEvents {
		if ev.Ph == "M" {
			continue
		}
		if ev.TS == nil {
			return fmt.Errorf("a %q event without ts", ev.Ph)
		}
		us, ok := new(big.Rat).SetString(ev.TS.String())
		if !ok {
			return fmt.Errorf("ts %s is not a number", ev.TS)
		}
		ns := us.Mul(us, big.NewRat(1000, 1))
		key := map[string]string{"b": "made_at_event", "e": "ended_at_event", "i": "event"}[ev.Ph]
		num, _ := ev.Args[key].(json.Number)
		at, err := num.Int64()
		if _, live := ev.Args["live_at_end"]; live {
			at, err = int64(len(ts)-1), nil
		}
		if ev.Ph == "C" {
			found := false
			for _, x := range ts {
				found = found || ns.Cmp(new(big.Rat).SetInt64(x)) == 0
			}
			if !found {
				return fmt.Errorf("a counter at ts %s, no event's time", ev.TS)
			}
			continue
		}
		if err != nil || at < 0 || int(at) >= len(ts) {
			return fmt.Errorf("a %q event names no event (%s)", ev.Ph, ev.Args[key])
		}
		if ns.Cmp(new(big.Rat).SetInt64(ts[at])) != 0 {
			return fmt.Errorf("a %q event of event %d at \"ts\":%s, want %d ns", ev.Ph, at, ev.TS, ts[at])
		}
		checked++
	}
	if checked < 5 { // 2 starts, 2 ends, a violation at least
		return fmt.Errorf("only %d events checked", checked)
	}
	return nil
}
