package torchsnap

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// FuzzSnapshot reads any bytes as a snapshot: it must never panic, must
// fail only with a *Error, and what it reads must be layer-4 events that a
// Writer writes again and the Reader reads back as they were.
//
// Its seed corpus is the small testdata/*.pickle and
// testdata/fuzz/FuzzSnapshot. Its name is its own, not that of the trace
// reader's target in the folder above, and it is in package torchsnap,
// not torchsnap_test beside the other tests: ClusterFuzzLite's builder
// greps a package's whole folder tree for a target's name and refuses two
// files that have it, and go-118-fuzz-build cannot build a target of an
// external test package (TestClusterFuzzLiteBuildsEveryTarget, fuzz/).
func FuzzSnapshot(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.pickle"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) > 16<<10 {
			continue // the real snapshot: too big a seed to mutate quickly
		}
		f.Add(data)
	}
	f.Add([]byte("\x80\x02cos\nsystem\n(S'ls'\ntR."))
	f.Add([]byte("\x80\x04X\xff\xff\xff\xff"))
	// Small limits keep each run fast, so that the fuzzer explores
	// rather than minimizes; the limits themselves are tested elsewhere.
	lim := Limits{MaxBytes: 64 << 10}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReaderLimits(bytes.NewReader(data), lim)
		if err != nil {
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("error %q (%T) is not a *Error", err, err)
			}
			return
		}
		evs := readEvents(t, r)
		var b bytes.Buffer
		w := NewWriter(&b)
		for _, ev := range evs {
			var e Entry
			switch ev.Op {
			case traces.OpDevMalloc:
				e.Action = ActionSegmentAlloc
			case traces.OpDevFree:
				e.Action = ActionSegmentFree
			case traces.OpPoolGet:
				e.Action = ActionAlloc
			case traces.OpPoolPut:
				e.Action = ActionFreeCompleted
			case traces.OpDevMap:
				e.Action = ActionSegmentMap
			case traces.OpDevUnmap:
				e.Action = ActionSegmentUnmap
			default:
				t.Fatalf("event %+v is not of layer 4", ev)
			}
			e.Addr, e.Size, e.Site, e.TimeUS = uint64(ev.Addr), ev.Size, ev.Site, ev.T/1000
			if err := w.Write(e); err != nil {
				return // an address memory_viz cannot hold
			}
		}
		if err := w.Close(nil); err != nil {
			t.Fatal(err)
		}
		r2, err := NewReader(&b)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		if back := readEvents(t, r2); len(back) != len(evs) {
			t.Fatalf("%d events read back, want %d", len(back), len(evs))
		}
	})
}

// readEvents reads r to its end.
func readEvents(t *testing.T, r *Reader) []traces.Event {
	var evs []traces.Event
	for {
		var ev traces.Event
		err := r.Next(&ev)
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		evs = append(evs, ev)
	}
}
