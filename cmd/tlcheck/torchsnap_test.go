package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// snapFile is a snapshot written by Python's pickle, in the reader's
// testdata (see traces/torchsnap/testdata/make_snapshots.py).
func snapFile(name string) string {
	return filepath.Join("..", "..", "traces", "torchsnap", "testdata", name)
}

const snapNote = "INCOMPLETE: a memory snapshot is taken mid-run: what it still holds is live, not leaked, so no leak check ran"

func TestReplayTorchSnapshots(t *testing.T) {
	globalPickle := files(t, "evil.pickle", "\x80\x02cos\nsystem\n(S'ls'\ntR.")[0]
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // parts of standard output
		stderr string   // a part of standard error
	}{
		{"protocol 2, detected", []string{snapFile("clean-p2.pickle")}, exitClean, []string{"OK: no violations", snapNote}, ""},
		{"protocol 4, detected", []string{snapFile("clean-p4.pickle")}, exitClean, []string{"events 9,", snapNote}, ""},
		{"protocol 5, named", []string{"--from", "torch-snapshot", snapFile("clean-p5.pickle")}, exitClean, []string{snapNote}, ""},
		// protocol 0 has no PROTO byte to detect it by
		{"protocol 0, named", []string{"--from", "torch-snapshot", snapFile("clean-p0.pickle")}, exitClean, []string{snapNote}, ""},
		{"a block handed out before its free completed", []string{snapFile("reuse.pickle")}, exitViolation,
			[]string{"ERROR: overlap at event 2 (train.py:51)", "allocated here: event 1 (train.py:42)", snapNote}, ""},
		{"two devices", []string{snapFile("twodev.pickle")}, exitClean, []string{"events 6,"}, ""},
		{"expandable segments", []string{snapFile("expandable.pickle")}, exitClean, []string{"OK: no violations", snapNote,
			"device memory: peak allocated 222233088 bytes (211.9 MiB) / peak reserved 232783872 bytes (222.0 MiB); at the end allocated 94994432 bytes (90.6 MiB) / reserved 232783872 bytes (222.0 MiB)"}, ""},
		{"allocated and reserved, named in json", []string{"--json", snapFile("real-cuda.pickle")}, exitClean,
			[]string{`"device_memory":{"peak_allocated_bytes":135879684,"allocated_bytes_at_end":68770820,"peak_reserved_bytes":140509184,"reserved_bytes_at_end":69206016}`}, ""},
		{"expandable segments, a block in unmapped bytes", []string{snapFile("expandable-bug.pickle")}, exitViolation,
			[]string{"ERROR: use-after-free at event 116", "which was unmapped at event 115"}, ""},
		{"real, from an H200", []string{snapFile("real-cuda.pickle")}, exitClean, []string{"OK: no violations", "events 129,", snapNote}, ""},
		{"a pickle read as a trace", []string{"--from", "trace", snapFile("clean-p4.pickle")}, exitInput, nil, "looks like a pickle, such as a PyTorch memory snapshot"},
		{"a trace read as a snapshot", []string{"--from", "torch-snapshot", filepath.Join("..", "..", "traces", "testdata", "corpus", "clean-layer4.jsonl")}, exitInput, nil, "clean-layer4.jsonl: reading a PyTorch memory snapshot: byte 0: unknown pickle opcode 0x7b"},
		{"code in the pickle", []string{globalPickle}, exitInput, nil, "evil.pickle: reading a PyTorch memory snapshot: byte 2: opcode GLOBAL would import a Python name"},
		{"json", []string{"--json", snapFile("reuse.pickle")}, exitViolation, []string{`"kind":"overlap"`, `"complete":false`}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCmd("", append([]string{"replay"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout, stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			if !strings.Contains(stderr, tc.stderr) || (tc.stderr == "" && stderr != "") {
				t.Errorf("stderr %q, want it to contain %q", stderr, tc.stderr)
			}
		})
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

// A trace's device layer, exported as a snapshot, reads back as the same
// events and replays to the same verdict.
func TestExportTorchSnapshotRoundTrip(t *testing.T) {
	corpus := filepath.Join("..", "..", "traces", "testdata", "corpus")
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
			code, _, stderr := exportCmd("", "--format", "torch-snapshot", "--out", out, file)
			if code == exitInput {
				t.Fatalf("export: exit 2: %s", stderr)
			}
			want := deviceEvents(t, file, "auto")
			got := deviceEvents(t, out, "torch-snapshot")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("device events read back (-want +got):\n%s", diff)
			}
			// The snapshot's verdict: no violation, live blocks not leaked.
			code, stdout, stderr := runCmd("", "replay", "--json", out)
			var rep struct {
				Violations []any `json:"violations"`
				Complete   bool  `json:"complete"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitClean || rep.Complete || len(rep.Violations) != 0 {
				t.Errorf("replay of the export: exit %d, %+v, %v, stderr %s", code, rep, err, stderr)
			}
		})
	}
}

// What the model never held live has no entry: a pool_put of an unknown
// block is reported by the export's exit code, and left out of the file.
func TestExportTorchSnapshotLeavesOutWhatNeverLived(t *testing.T) {
	trace := `{"format":"tlcheck-trace","version":1}
{"op":"dev_malloc","addr":"0x7000","size":4096}
{"op":"pool_put","addr":"0x7100"}
{"op":"pool_get","addr":"0x7000","size":64,"site":"k.py:3"}
`
	code, stdout, stderr := exportCmd(trace, "--format", "torch-snapshot", "-")
	if code != exitViolation {
		t.Fatalf("exit %d, want 1: %s", code, stderr)
	}
	r, err := torchsnap.NewReader(bytes.NewReader([]byte(stdout)))
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Stats(); s.Entries != 2 || s.LiveSegments != 1 || s.LiveBlocks != 1 {
		t.Errorf("stats %+v: want the segment and the block, alive at the end", s)
	}
}

// A snapshot is binary: not to a terminal.
func TestExportTorchSnapshotNotToTerminal(t *testing.T) {
	code, _, stderr := exportTTY("", true, "--format", "torch-snapshot", snapFile("clean-p4.pickle"))
	if code != exitInput || !strings.Contains(stderr, "binary") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(snapFile("clean-p4.pickle")); err != nil {
		t.Fatal(err)
	}
}
