package torchsnap_test

import (
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// testdata/real-cuda.pickle is a real snapshot: PyTorch 2.11 (CUDA 13.0)
// on an NVIDIA H200, written by testdata/make_real_snapshot.py with
// _record_memory_history's defaults (stacks="all": C++ frames first).
func TestRealSnapshot(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "real-cuda.pickle"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := torchsnap.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	want := torchsnap.Stats{Entries: 179, Prelude: 5, LiveSegments: 3, LiveBlocks: 10, FreeRequested: 55}
	if got := r.Stats(); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
	evs := drain(t, r)
	ops := map[traces.Op]int{}
	python, script := 0, 0
	for _, ev := range evs {
		ops[ev.Op]++
		if ev.Op == traces.OpPoolGet && strings.Contains(ev.Site, ".py:") {
			python++
		}
		if strings.HasSuffix(ev.Site, "mk.py:9") {
			script++ // the script's own line: the training step's forward
		}
	}
	// The trace's alloc, free_completed, segment_alloc and segment_free
	// entries, and before them what was live when recording began.
	want1 := map[traces.Op]int{traces.OpDevMalloc: 5 + 1, traces.OpPoolGet: 61 + 4, traces.OpPoolPut: 55, traces.OpDevFree: 3}
	if !maps.Equal(ops, want1) {
		t.Errorf("events by op: %v, want %v", ops, want1)
	}
	// With C++ frames first, the site is still the Python line, where
	// there is one: the backward pass allocates on autograd's C++ thread.
	if python < ops[traces.OpPoolGet]/2 || script == 0 {
		t.Errorf("%d of %d blocks have a Python site, %d the script's line", python, ops[traces.OpPoolGet], script)
	}
}

func drain(t *testing.T, r *torchsnap.Reader) []traces.Event {
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
