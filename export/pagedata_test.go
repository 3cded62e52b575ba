package export

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// pageOf exports trace as HTML and returns the memory view's data as the
// page's script reads it.
func pageOf(t *testing.T, trace string) (*pageData, *pageLives) {
	t.Helper()
	r, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := Write(&out, HTML, r, Options{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	var d pageData
	var l pageLives
	for _, x := range []struct {
		id string
		v  any
	}{{"mem-data", &d}, {"mem-lives", &l}} {
		_, s, ok := strings.Cut(page, `<script type="application/json" id="`+x.id+`">`)
		s, _, ok2 := strings.Cut(s, "</script>")
		if !ok || !ok2 {
			t.Fatalf("the page has no %s", x.id)
		}
		if err := json.Unmarshal([]byte(s), x.v); err != nil {
			t.Fatalf("%s: %v", x.id, err)
		}
	}
	return &d, &l
}

// row is one life as the page's columns give it.
type row struct {
	born, died  int // died -1 while live
	size, addr  uint64
	site, seg   int // seg -1 for none
	bornT, life int64
}

// decodeColumns reads columns as page.js does.
func decodeColumns(t *testing.T, c pageColumns) []row {
	t.Helper()
	col := func(s string) []byte {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	born, died, size, addr, site, seg, bornT, diedT := col(c.Born), col(c.Died), col(c.Size), col(c.Addr), col(c.Site), col(c.Seg), col(c.BornT), col(c.DiedT)
	u := func(b *[]byte) uint64 {
		v, n := binary.Uvarint(*b)
		if n <= 0 {
			t.Fatalf("a column ends early")
		}
		*b = (*b)[n:]
		return v
	}
	s := func(b *[]byte) int64 {
		v, n := binary.Varint(*b)
		if n <= 0 {
			t.Fatalf("a column ends early")
		}
		*b = (*b)[n:]
		return v
	}
	var rows []row
	var r row
	var a, tt int64
	for range c.N {
		r.born += int(u(&born))
		r.died = int(u(&died)) + r.born - 1
		if r.died < r.born {
			r.died = -1
		}
		r.size = u(&size) * c.Unit
		a += s(&addr)
		r.addr = uint64(a) * c.Unit
		r.site = int(u(&site))
		r.seg = -1
		if len(seg) > 0 {
			r.seg = int(u(&seg)) - 1
		}
		if len(bornT) > 0 {
			tt += s(&bornT)
			r.bornT, r.life = tt*c.UnitT, int64(u(&diedT))*c.UnitT
		}
		rows = append(rows, r)
	}
	for name, rest := range map[string][]byte{"born": born, "died": died, "size": size, "addr": addr, "site": site, "seg": seg, "bornT": bornT, "diedT": diedT} {
		if len(rest) > 0 {
			t.Errorf("column %s has %d bytes past its %d rows", name, len(rest), c.N)
		}
	}
	return rows
}

const pageHeader = `{"format":"tlcheck-trace","version":1}` + "\n"

func TestPageColumns(t *testing.T) {
	d, l := pageOf(t, pageHeader+`{"op":"dev_malloc","addr":"0x10000","size":65536,"t":5000}
{"op":"pool_get","addr":"0x10000","size":1024,"site":"a.py:1","t":6000}
{"op":"pool_get","addr":"0x10400","size":512,"site":"b.py:2","t":9000}
{"op":"pool_put","addr":"0x10000","t":12000}
{"op":"dev_malloc","addr":"0x40000","size":131072,"site":"alloc.cpp:9","t":13000}
{"op":"pool_get","addr":"0x40200","size":2048,"site":"a.py:1","t":20000}
`)
	if !d.Time || d.Space != "device" || d.Reserved == "" {
		t.Fatalf("the view is %s, time %v, reserved %q: want the device's, timed, with reserved named", d.Space, d.Time, d.Reserved)
	}
	site := func(i int) string { return d.Sites[i] }
	blocks := decodeColumns(t, l.Blocks)
	var got []string
	for _, b := range blocks {
		got = append(got, fmt.Sprintf("%d-%d %d@%#x %s seg%d t%d+%d", b.born, b.died, b.size, b.addr, site(b.site), b.seg, b.bornT, b.life))
	}
	want := []string{
		"1-3 1024@0x10000 a.py:1 seg0 t1000+6000",
		"2--1 512@0x10400 b.py:2 seg0 t4000+0",
		"5--1 2048@0x40200 a.py:1 seg1 t15000+0",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("blocks\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	segs := decodeColumns(t, l.Segments)
	if len(segs) != 2 || segs[1].addr != 0x40000 || segs[1].size != 131072 || site(segs[1].site) != "alloc.cpp:9" || segs[1].bornT != 8000 {
		t.Errorf("segments %+v", segs)
	}
	if l.Blocks.Unit != 512 || l.Blocks.UnitT != 1000 {
		t.Errorf("units %d B and %d ns, want 512 and 1000", l.Blocks.Unit, l.Blocks.UnitT)
	}
	if d.Peak.Bytes != 2048+512 || d.Peak.Event != 5 || d.Peak.X != 15000 || d.Peak.Reserved != 65536+131072 {
		t.Errorf("peak %+v, want 2560 bytes at event 5 (15 µs), reserved 192 KiB", d.Peak)
	}
	// Two timelines, by time (to 15 µs and a little more) and by event;
	// each shows the peak's event in some bucket at the peak's height.
	if len(d.Timelines) != 2 || !d.Timelines[0].Time || d.Timelines[0].X1 != 15300 || d.Timelines[1].Time || d.Timelines[1].X1 != 6 {
		t.Fatalf("timelines %+v", d.Timelines)
	}
	for _, tl := range d.Timelines {
		found := false
		for i, e := range tl.Sample {
			var sum uint64
			for _, band := range tl.Bytes {
				sum += band[i]
			}
			found = found || e == 5 && sum == 2560
		}
		if !found {
			t.Errorf("the timeline by time %v never shows the peak: samples %v", tl.Time, tl.Sample)
		}
	}
}

// TestPageTimeline holds the timeline to its promises on a long trace of
// many sites: bounded, the peak drawn at its height, the bands stacking
// to the sample's total under the envelope, the biggest sites at the peak
// named.
func TestPageTimeline(t *testing.T) {
	var b strings.Builder
	b.WriteString(pageHeader)
	b.WriteString(`{"op":"dev_malloc","addr":"0x100000000","size":1073741824}` + "\n")
	const n = 60000
	big := 0
	for i := range n {
		addr := 0x100000000 + (i%4000)*4096
		if i >= 4000 {
			fmt.Fprintf(&b, `{"op":"pool_put","addr":"%#x"}`+"\n", addr)
		}
		size, site := 512+(i%7)*512, fmt.Sprintf("site%d.py:%d", i%40, i%40)
		if i == 45000 {
			size, site = 1<<20, "spike.py:1" // one block that makes the peak
			big = 1 << 20
		}
		fmt.Fprintf(&b, `{"op":"pool_get","addr":"%#x","size":%d,"site":%q}`+"\n", addr, size, site)
	}
	d, _ := pageOf(t, b.String())
	if len(d.Timelines) != 1 {
		t.Fatalf("%d timelines, want one by events (the trace has no times)", len(d.Timelines))
	}
	tl := d.Timelines[0]
	if len(tl.Sample) != maxPageBuckets || len(d.Bands) != maxPageBands+1 || len(tl.Bytes) != len(d.Bands) || d.Bands[len(d.Bands)-1].Site != -1 {
		t.Fatalf("%d buckets and %d bands (the last of site %d), want %d and %d, the last other", len(tl.Sample), len(d.Bands), d.Bands[len(d.Bands)-1].Site, maxPageBuckets, maxPageBands+1)
	}
	if d.Sites[d.Bands[0].Site] != "spike.py:1" || d.Bands[0].AtPeak != uint64(big) {
		t.Errorf("the first band is %s with %d at the peak, want the spike's site", d.Sites[d.Bands[0].Site], d.Bands[0].AtPeak)
	}
	var top uint64
	for i := range tl.Sample {
		var sum uint64
		for _, band := range tl.Bytes {
			sum += band[i]
		}
		if sum > tl.Envelope[i] {
			t.Fatalf("bucket %d: allocated %d above reserved %d", i, sum, tl.Envelope[i])
		}
		top = max(top, sum)
	}
	if top != d.Peak.Bytes || d.Peak.Bytes == 0 {
		t.Errorf("the timeline's highest point is %d, the peak %d", top, d.Peak.Bytes)
	}
	var atPeak uint64
	for _, band := range d.Bands {
		atPeak += band.AtPeak
	}
	if atPeak != d.Peak.Bytes {
		t.Errorf("the bands hold %d at the peak, the peak is %d", atPeak, d.Peak.Bytes)
	}
	if events := 1 + n + n - 4000; d.Time || tl.Time || tl.X1 != float64(events) {
		t.Errorf("x runs to %v (time %v), want events, to %d", tl.X1, tl.Time, events)
	}
}

// TestPageHeap: a trace without device memory shows the heap's live
// bytes, with no envelope, by event.
func TestPageHeap(t *testing.T) {
	d, l := pageOf(t, pageHeader+`{"op":"malloc","addr":"0x100","size":100,"site":"a.c:1"}
{"op":"malloc","addr":"0x200","size":300,"site":"b.c:2"}
{"op":"free","addr":"0x100"}
{"op":"end"}
`)
	if d.Space != "heap" || d.Reserved != "" || len(d.Timelines) != 1 || d.Timelines[0].Envelope != nil || d.Time {
		t.Errorf("space %s, reserved %q, timelines %+v, time %v: want the heap by events, no envelope", d.Space, d.Reserved, d.Timelines, d.Time)
	}
	if d.Peak.Bytes != 400 || d.Peak.Event != 1 {
		t.Errorf("peak %+v, want 400 at event 1", d.Peak)
	}
	if rows := decodeColumns(t, l.Blocks); len(rows) != 2 || rows[0].died != 2 || rows[1].died != -1 || rows[0].seg != -1 {
		t.Errorf("blocks %+v", rows)
	}
	if len(d.Marks) != 1 || d.Marks[0].Kind != string(traces.Leak) {
		t.Errorf("marks %+v, want the leak", d.Marks)
	}
}

// TestPageNoMemory: a trace that allocates nothing has no memory view,
// and so no script.
func TestPageNoMemory(t *testing.T) {
	r, err := traces.NewReader(strings.NewReader(pageHeader + `{"op":"end"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := Write(&out, HTML, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "<script") || strings.Contains(out.String(), `id="memory"`) {
		t.Error("a page of no memory has the memory view")
	}
}

// TestPageCut: past maxPageLives the page keeps no more lives and says
// from which event.
func TestPageCut(t *testing.T) {
	defer func(n int) { maxPageLives = n }(maxPageLives)
	maxPageLives = 2
	d, l := pageOf(t, pageHeader+`{"op":"malloc","addr":"0x100","size":100}
{"op":"malloc","addr":"0x200","size":300}
{"op":"free","addr":"0x100"}
{"op":"malloc","addr":"0x300","size":50}
{"op":"end"}
`)
	if d.Cut != 3 || l.Blocks.N != 2 {
		t.Errorf("cut at event %d with %d lives, want 3 and 2", d.Cut, l.Blocks.N)
	}
}
