package export

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// snapFile is a snapshot written by Python's pickle, in the reader's
// testdata (see traces/torchsnap/testdata/make_snapshots.py).
func snapFile(name string) string {
	return filepath.Join("..", "traces", "torchsnap", "testdata", name)
}

// writeSnapshot exports file (any input tlcheck reads) as a memory
// snapshot to out, as the command does.
func writeSnapshot(t *testing.T, file, out string) {
	t.Helper()
	in, err := input.Open(file, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var buf bytes.Buffer
	if _, err := Write(&buf, TorchSnapshot, in, Options{Name: filepath.Base(file), Snapshot: in.Format() == input.TorchSnapshot}); err != nil {
		t.Fatalf("export: %v", err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A trace's device layer, exported as a snapshot, reads back as the same
// events and replays to the same verdict.
func TestExportTorchSnapshotRoundTrip(t *testing.T) {
	corpus := filepath.Join("..", "traces", "testdata", "corpus")
	for _, file := range []string{
		snapFile("clean-p4.pickle"),
		snapFile("twodev.pickle"),
		snapFile("real-cuda.pickle"),
		filepath.Join(corpus, "clean-layer4.jsonl"),
		filepath.Join(corpus, "leak-pool.jsonl"),
		filepath.Join(corpus, "clean-expandable-segment.jsonl"),
		snapFile("expandable.pickle"),
	} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "snap.pickle")
			writeSnapshot(t, file, out)
			want := deviceEvents(t, file, "auto")
			got := deviceEvents(t, out, "torch-snapshot")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("device events read back (-want +got):\n%s", diff)
			}
			// The snapshot's verdict: no violation, live blocks not leaked.
			in, err := input.Open(out, input.Options{Format: input.TorchSnapshot})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			rep, err := model.Replay(in)
			if err != nil || rep.Complete || len(rep.Violations) != 0 {
				t.Errorf("replay of the export: %+v, %v", rep, err)
			}
		})
	}
}

// What the model never held live has no entry: a pool_put of an unknown
// block is reported as a violation, and left out of the file.
func TestExportTorchSnapshotLeavesOutWhatNeverLived(t *testing.T) {
	trace := `{"format":"tlcheck-trace","version":1}
{"op":"dev_malloc","addr":"0x7000","size":4096}
{"op":"pool_put","addr":"0x7100"}
{"op":"pool_get","addr":"0x7000","size":64,"site":"k.py:3"}
`
	var out bytes.Buffer
	sum, err := Write(&out, TorchSnapshot, mustSource(t, trace), Options{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Violations == 0 {
		t.Fatalf("no violation; want the pool_put of a block never got")
	}
	r, err := torchsnap.NewReader(&out)
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Stats(); s.Entries != 2 || s.LiveSegments != 1 || s.LiveBlocks != 1 {
		t.Errorf("stats %+v: want the segment and the block, alive at the end", s)
	}
}

// deviceEvents reads the layer-4 events of a file as replay reads it.
func deviceEvents(t *testing.T, file, from string) []traces.Event {
	t.Helper()
	in, err := input.Open(file, input.Options{Format: input.Format(from)})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var evs []traces.Event
	for {
		var ev traces.Event
		err := in.Next(&ev)
		if err == io.EOF {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Op {
		case traces.OpDevMalloc, traces.OpDevFree, traces.OpPoolGet, traces.OpPoolPut, traces.OpDevMap, traces.OpDevUnmap:
			// A free's frames are those of the allocation that made the
			// thing, and a snapshot keeps no thread (stream).
			if ev.Op == traces.OpDevFree || ev.Op == traces.OpPoolPut || ev.Op == traces.OpDevUnmap {
				ev.Site = ""
			}
			ev.Thread, ev.HasSize = "", false // readers differ on HasSize where size is required
			evs = append(evs, ev)
		}
	}
}
