package torchsnap_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// testdata/expandable.pickle is a training loop under
// expandable_segments:True (testdata/make_expandable_snapshot.py):
// segment_map and segment_unmap entries, the weights made before
// recording began, and segments that are mapped ranges.
func TestReadExpandableSnapshot(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "expandable.pickle"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := torchsnap.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, r)
	prelude := r.Stats().Prelude
	ops := map[traces.Op]int{}
	var mappedAtStart uint64
	for i, ev := range evs {
		ops[ev.Op]++
		switch {
		case i < prelude && ev.Op == traces.OpDevMalloc:
			t.Errorf("prelude event %d: %s; an expandable segment's range is a dev_map", i, ev.Op)
		case i < prelude && ev.Op == traces.OpDevMap:
			mappedAtStart += ev.Size
		case i >= prelude && (ev.Op == traces.OpDevMap || ev.Op == traces.OpDevUnmap) && (!ev.HasSize || ev.Size%(2<<20) != 0):
			t.Errorf("event %d: %s of %d bytes: want whole pages", i, ev.Op, ev.Size)
		}
	}
	// The weights (24 MiB, 6 MiB: two 20 MiB pages; 512 KiB, 96 KiB: one
	// 2 MiB page) were mapped before recording began.
	if mappedAtStart != 42<<20 {
		t.Errorf("mapped before the trace began: %d bytes, want 42 MiB", mappedAtStart)
	}
	if ops[traces.OpDevMap] != 13+2 || ops[traces.OpDevUnmap] != 2 || ops[traces.OpPoolGet] != 49+4 || ops[traces.OpPoolPut] != 45 {
		t.Errorf("events by op: %v", ops)
	}
	// The weights' blocks have no frames; their ranges' sites are none
	// either, so both stay without a site, and blocks allocated in the
	// trace keep theirs.
	for _, ev := range evs[prelude:] {
		if ev.Op == traces.OpPoolGet && ev.Site == "" {
			t.Errorf("a block allocated in the trace has no site: %+v", ev)
		}
	}
}

// What was live before recording began and has no frames of its own takes
// its site from its neighbours in segments: a segment from the live block
// holding the most of its bytes, a block from its segment. (A pprof export
// of a mid-run snapshot otherwise shows such bytes as "(no site)".)
func TestPreludeSitesFromSegments(t *testing.T) {
	var buf bytes.Buffer
	w := torchsnap.NewWriter(&buf)
	err := w.Close([]torchsnap.Segment{
		{Addr: seg, Size: 8 * mib, Blocks: []torchsnap.Block{
			{Addr: seg, Size: mib, Site: "small.py:1"},
			{Addr: seg + mib, Size: 4 * mib, Site: "big.py:2"},
			{Addr: seg + 5*mib, Size: mib}, // no frames
		}},
		{Addr: seg + 64*mib, Size: 2 * mib, Site: "seg.py:3", Blocks: []torchsnap.Block{{Addr: seg + 64*mib, Size: mib}}},
		{Addr: seg + 128*mib, Size: 40 * mib, Expandable: true, Blocks: []torchsnap.Block{{Addr: seg + 130*mib, Size: mib, Site: "mapped.py:4"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		op   traces.Op
		addr traces.Addr
	}
	want := map[key]string{
		{traces.OpDevMalloc, seg}:          "big.py:2", // no frames: its largest block's
		{traces.OpPoolGet, seg}:            "small.py:1",
		{traces.OpPoolGet, seg + mib}:      "big.py:2",
		{traces.OpPoolGet, seg + 5*mib}:    "", // no frames, nor has its segment: none
		{traces.OpDevMalloc, seg + 64*mib}: "seg.py:3",
		{traces.OpPoolGet, seg + 64*mib}:   "seg.py:3", // no frames: its segment's
		{traces.OpDevMap, seg + 128*mib}:   "mapped.py:4",
		{traces.OpPoolGet, seg + 130*mib}:  "mapped.py:4",
	}
	for _, ev := range got {
		k := key{ev.Op, ev.Addr}
		site, ok := want[k]
		if !ok {
			t.Errorf("unexpected %s %s", ev.Op, ev.Addr)
			continue
		}
		delete(want, k)
		if ev.Site != site {
			t.Errorf("%s %s: site %q, want %q", ev.Op, ev.Addr, ev.Site, site)
		}
	}
	for k := range want {
		t.Errorf("no %s %s", k.op, k.addr)
	}
}
