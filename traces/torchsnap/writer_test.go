package torchsnap_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

const s2 = seg + 20*mib

// history is a device layer's history as a Writer takes it: entries in
// order, then what is live at the end.
var history = struct {
	entries []torchsnap.Entry
	live    []torchsnap.Segment
}{
	entries: []torchsnap.Entry{
		{Action: torchsnap.ActionSegmentAlloc, Addr: seg, Size: 20 * mib, Site: "model.py:1", TimeUS: 5},
		{Action: torchsnap.ActionAlloc, Addr: seg, Size: 512, Site: "model.py:2", TimeUS: 6},
		{Action: torchsnap.ActionAlloc, Addr: seg + 512, Size: 1024, Site: "gen/kernel"},
		{Action: torchsnap.ActionFreeRequested, Addr: seg + 512, Size: 1024, Site: "gen/kernel"},
		{Action: torchsnap.ActionFreeCompleted, Addr: seg + 512, Size: 1024, Site: "gen/kernel"},
		{Action: torchsnap.ActionSegmentAlloc, Addr: s2, Size: 1 << 40, Site: "big.py:3"},
		{Action: torchsnap.ActionAlloc, Addr: s2 + 4096, Size: 1 << 35, Site: "ünïcode.py:4"},
		{Action: torchsnap.ActionSegmentAlloc, Addr: 1 << 62, Size: 2 * mib},
		{Action: torchsnap.ActionSegmentFree, Addr: 1 << 62, Size: 2 * mib},
	},
	live: []torchsnap.Segment{
		{Addr: s2, Size: 1 << 40, Site: "big.py:3", Blocks: []torchsnap.Block{{Addr: s2 + 4096, Size: 1 << 35, Site: "ünïcode.py:4"}}},
		{Addr: seg, Size: 20 * mib, Site: "model.py:1", Blocks: []torchsnap.Block{{Addr: seg, Size: 512, Site: "model.py:2"}}},
	},
}

func writeHistory(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	w := torchsnap.NewWriter(&b)
	for _, e := range history.entries {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(history.live); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// What a Writer writes, the Reader reads back as the events it came from.
func TestRoundTrip(t *testing.T) {
	got, err := readAll(t, writeHistory(t))
	if err != nil {
		t.Fatal(err)
	}
	ev := func(op traces.Op, addr, size uint64, site string, us int64) traces.Event {
		e := traces.Event{Op: op, Addr: traces.Addr(addr), Size: size, HasSize: op == traces.OpDevMalloc || op == traces.OpPoolGet, Site: site}
		if us != 0 {
			e.T = us * 1000
		}
		return e
	}
	want := []traces.Event{
		ev(traces.OpDevMalloc, seg, 20*mib, "model.py:1", 5),
		ev(traces.OpPoolGet, seg, 512, "model.py:2", 6),
		ev(traces.OpPoolGet, seg+512, 1024, "gen/kernel", 0),
		ev(traces.OpPoolPut, seg+512, 0, "gen/kernel", 0),
		ev(traces.OpDevMalloc, s2, 1<<40, "big.py:3", 0),
		ev(traces.OpPoolGet, s2+4096, 1<<35, "ünïcode.py:4", 0),
		ev(traces.OpDevMalloc, 1<<62, 2*mib, "", 0),
		ev(traces.OpDevFree, 1<<62, 0, "", 0),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events read back (-want +got):\n%s", diff)
	}
}

// An address memory_viz cannot read (2^63 or more) is an error, not a
// wrong number.
func TestWriterRefusesHugeAddress(t *testing.T) {
	w := torchsnap.NewWriter(new(bytes.Buffer))
	err := w.Write(torchsnap.Entry{Action: torchsnap.ActionAlloc, Addr: 1 << 63, Size: 8})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("0x8000000000000000 does not fit")) {
		t.Fatalf("error %v", err)
	}
}

// pythonCheck loads a pickle with Python's own pickle module, checks with
// pickletools that it uses only the opcodes memory_viz's unpickler reads,
// and prints the snapshot as JSON.
const pythonCheck = `
import json, pickle, pickletools, sys
data = open(sys.argv[1], "rb").read()
viz = {"PROTO", "APPEND", "APPENDS", "LIST", "TUPLE", "NEWFALSE", "NEWTRUE",
       "NONE", "BINGET", "BININT", "BININT1", "BININT2", "EMPTY_DICT",
       "EMPTY_LIST", "FRAME", "LONG1", "LONG_BINGET", "MARK", "MEMOIZE",
       "BINPUT", "LONG_BINPUT", "SETITEMS", "SETITEM", "DICT",
       "SHORT_BINUNICODE", "BINUNICODE", "STOP", "EMPTY_TUPLE", "TUPLE1",
       "TUPLE2", "TUPLE3", "BINFLOAT"}
for op, arg, pos in pickletools.genops(data):
    if op.name not in viz:
        sys.exit(f"opcode {op.name} at byte {pos} is not one memory_viz reads")
    if op.name == "PROTO" and not 2 <= arg <= 4:
        sys.exit(f"protocol {arg}: memory_viz reads 2 to 4")
    if op.name == "LONG1" and (arg.bit_length() + 8) // 8 > 8:
        sys.exit(f"LONG1 {arg} is over 8 bytes")
print(json.dumps(pickle.loads(data)))
`

// Python's pickle reads what a Writer writes, as the snapshot memory_viz
// expects. Skipped where python3 is missing.
func TestPythonReadsWriter(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	file := filepath.Join(t.TempDir(), "snap.pickle")
	if err := os.WriteFile(file, writeHistory(t), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "-c", pythonCheck, file).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	var snap struct {
		Segments []struct {
			Address   uint64 `json:"address"`
			TotalSize uint64 `json:"total_size"`
			Blocks    []struct {
				Address uint64 `json:"address"`
				Size    uint64 `json:"size"`
				State   string `json:"state"`
				Frames  []struct {
					Filename string `json:"filename"`
					Line     int    `json:"line"`
				} `json:"frames"`
			} `json:"blocks"`
		} `json:"segments"`
		DeviceTraces [][]struct {
			Action string `json:"action"`
			Addr   uint64 `json:"addr"`
			Size   uint64 `json:"size"`
			Stream int    `json:"stream"`
			Frames []struct {
				Filename string `json:"filename"`
				Line     int    `json:"line"`
				Name     string `json:"name"`
			} `json:"frames"`
		} `json:"device_traces"`
	}
	if err := json.Unmarshal(out, &snap); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(snap.DeviceTraces) != 1 || len(snap.DeviceTraces[0]) != len(history.entries) {
		t.Fatalf("device_traces: %+v", snap.DeviceTraces)
	}
	for i, e := range snap.DeviceTraces[0] {
		w := history.entries[i]
		if e.Action != w.Action || e.Addr != w.Addr || e.Size != w.Size {
			t.Errorf("entry %d: %+v, want %+v", i, e, w)
		}
	}
	if f := snap.DeviceTraces[0][1].Frames; len(f) != 1 || f[0].Filename != "model.py" || f[0].Line != 2 {
		t.Errorf("frames of entry 1: %+v", f)
	}
	if len(snap.Segments) != 2 || snap.Segments[0].Address != seg || snap.Segments[1].Address != s2 {
		t.Fatalf("segments: %+v", snap.Segments)
	}
	// The blocks tile each segment: allocated ones and inactive gaps.
	for _, s := range snap.Segments {
		at := s.Address
		for _, b := range s.Blocks {
			if b.Address != at {
				t.Errorf("segment %#x: block at %#x, want %#x", s.Address, b.Address, at)
			}
			at += b.Size
		}
		if at != s.Address+s.TotalSize {
			t.Errorf("segment %#x: blocks end at %#x, want %#x", s.Address, at, s.Address+s.TotalSize)
		}
	}
	if b := snap.Segments[1].Blocks; len(b) != 3 || b[0].State != "inactive" || b[1].State != "active_allocated" || b[2].State != "inactive" {
		t.Errorf("blocks of the second segment: %+v", b)
	}
}
