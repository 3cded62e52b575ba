package snapgen

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"
)

// checkPy loads a pickle with Python's own pickle module and says what it
// holds, as torch.cuda.memory._snapshot()'s consumers read it.
const checkPy = `
import json, pickle, sys
d = pickle.load(sys.stdin.buffer)
t = d["device_traces"][0]
print(json.dumps({
    "keys": sorted(d.keys()),
    "entries": len(t),
    "actions": sorted({e["action"] for e in t}),
    "frame": t[-1]["frames"][0] if t[-1]["frames"] else None,
    "segments": len(d["segments"]),
    "blocks": sum(len(s["blocks"]) for s in d["segments"]),
    "tiled": all(sum(b["size"] for b in s["blocks"]) == s["total_size"] for s in d["segments"]),
    "max_split_size": d["allocator_settings"]["max_split_size"],
    "annotations": len(d["external_annotations"]),
}))
`

// TestPythonReadsIt: Python's pickle reads a generated snapshot as
// PyTorch's own: the keys, every entry, frames, segments tiled by their
// blocks, the settings and the annotations. It skips where python3 is
// not at hand.
func TestPythonReadsIt(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3:", err)
	}
	s, err := Generate(Config{Loop: KeepLoss, Steps: 5, MaxSplitSize: 64 << 20, Capacity: 1 << 30, Request: 2 << 30})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.WritePickle(&buf); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", checkPy)
	cmd.Stdin = &buf
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var got struct {
		Keys         []string
		Entries      int
		Actions      []string
		Frame        map[string]any
		Segments     int
		Blocks       int
		Tiled        bool
		MaxSplitSize int64 `json:"max_split_size"`
		Annotations  int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	blocks := 0
	for _, sg := range s.Segments {
		blocks += len(sg.Blocks)
	}
	want := []string{"alloc", "free_completed", "free_requested", "oom", "segment_alloc"}
	for _, a := range want {
		if !slices.Contains(got.Actions, a) {
			t.Errorf("Python read no %s entry among %v", a, got.Actions)
		}
	}
	if got.Entries != len(s.Entries) || got.Segments != len(s.Segments) ||
		got.Blocks != blocks || !got.Tiled || got.MaxSplitSize != 64<<20 || got.Annotations != len(s.Annotations) ||
		got.Frame["name"] != "<module>" || got.Frame["filename"] != "train.py" {
		t.Errorf("Python read %+v", got)
	}
	for i, k := range []string{"allocator_settings", "device_traces", "external_annotations", "segments"} {
		if i >= len(got.Keys) || got.Keys[i] != k {
			t.Errorf("keys %v; want %s among them, in order", got.Keys, k)
		}
	}
}
