package torchsnap_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

const (
	mib = 1 << 20
	seg = 0x7F0000000000
	t0  = 1_700_000_000_000_000 * 1000 // time_us 0 of the test snapshots, in ns
)

// readAll reads every event of a snapshot file.
func readAll(t *testing.T, data []byte) ([]traces.Event, error) {
	t.Helper()
	r, err := torchsnap.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var evs []traces.Event
	for {
		var ev traces.Event
		if err := r.Next(&ev); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("Next: %v", err)
			}
			return evs, nil
		}
		evs = append(evs, ev)
	}
}

func dev(op traces.Op, addr uint64, size uint64, site string, t int64, thread string) traces.Event {
	ev := traces.Event{Op: op, Addr: traces.Addr(addr), Size: size, HasSize: op == traces.OpDevMalloc || op == traces.OpPoolGet, Site: site, Thread: thread}
	if t != 0 {
		ev.T = t0 + t*1000
	}
	return ev
}

// The snapshots in testdata were written by Python's pickle
// (testdata/make_snapshots.py); each reads as these events.
func TestReadPythonSnapshots(t *testing.T) {
	a, b, c := uint64(seg+2*mib), uint64(seg+4*mib), uint64(seg+6*mib)
	clean := []traces.Event{
		// live before the trace began: rebuilt from segments; the
		// segment, which has no frames, takes its block's site
		dev(traces.OpDevMalloc, seg, 20*mib, "train.py:42", 0, ""),
		dev(traces.OpPoolGet, seg, 2*mib, "train.py:42", 0, ""),
		// the trace; free_requested, oom and snapshot yield nothing
		dev(traces.OpPoolGet, a, 2*mib, "train.py:42", 10, ""),
		dev(traces.OpPoolGet, c, 512, "opt.py:7", 11, "stream 94"), // the C++ frame is hidden
		dev(traces.OpPoolGet, b, 2*mib, "train.py:51", 13, ""),
		dev(traces.OpPoolPut, a, 0, "train.py:42", 15, ""),
		dev(traces.OpPoolPut, c, 0, "opt.py:7", 16, "stream 94"),
		dev(traces.OpDevMalloc, seg+20*mib, 2*mib, "train.py:51", 18, ""),
		dev(traces.OpDevFree, seg+20*mib, 0, "", 19, ""),
	}
	const d1 = 0x7E0000000000
	tests := []struct {
		file string
		want []traces.Event
	}{
		{"clean-p0.pickle", clean},
		{"clean-p2.pickle", clean},
		{"clean-p4.pickle", clean},
		{"clean-p5.pickle", clean},
		{"reuse.pickle", []traces.Event{
			dev(traces.OpDevMalloc, seg, 2*mib, "train.py:42", 1, ""),
			dev(traces.OpPoolGet, seg, mib, "train.py:42", 2, ""),
			dev(traces.OpPoolGet, seg, mib, "train.py:51", 4, ""), // before the free completed
			dev(traces.OpPoolPut, seg, 0, "train.py:42", 5, "stream 7"),
		}},
		{"twodev.pickle", []traces.Event{ // merged in time order
			dev(traces.OpDevMalloc, seg, 2*mib, "", 1, ""),
			dev(traces.OpDevMalloc, d1, 2*mib, "", 2, ""),
			dev(traces.OpPoolGet, seg, 4096, "train.py:42", 3, ""),
			dev(traces.OpPoolGet, d1, 4096, "train.py:51", 4, ""),
			dev(traces.OpPoolPut, seg, 0, "", 5, ""),
			dev(traces.OpPoolPut, d1, 0, "", 6, ""),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReaderHeaderAndStats(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "clean-p4.pickle"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := torchsnap.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Header(); h.Source != torchsnap.SourceName || h.Effects || h.Format != traces.FormatName {
		t.Errorf("header %+v", h)
	}
	want := torchsnap.Stats{Entries: 11, Prelude: 2, LiveSegments: 1, LiveBlocks: 2, FreeRequested: 2}
	if got := r.Stats(); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
}
