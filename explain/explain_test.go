package explain_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tlcheck/tlcheck/explain"
	"github.com/tlcheck/tlcheck/internal/snapgen"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

func explainBytes(t *testing.T, pickle []byte, opts explain.Options) *explain.Explanation {
	t.Helper()
	r, err := torchsnap.NewReader(bytes.NewReader(pickle))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := explain.Explain(r, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func generated(t testing.TB, cfg snapgen.Config) []byte {
	s, err := snapgen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.WritePickle(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// generatedCases are loops of every kind, recorded from the start, mid-run
// and through a ring buffer, under the default and max_split_size_mb,
// ending in an out-of-memory error or not.
var generatedCases = []snapgen.Config{
	{Loop: snapgen.Train},
	{Loop: snapgen.KeepLoss, Seed: 5},
	{Loop: snapgen.KeepGraph, Steps: 8},
	{Loop: snapgen.Train, RecordFrom: 3},
	{Loop: snapgen.KeepLoss, MaxEntries: 700},
	{Loop: snapgen.Train, MaxSplitSize: 20 << 20, Hidden: 2048, Seed: 9},
	{Loop: snapgen.KeepGraph, Steps: 100, Capacity: 300 << 20},
	{Loop: snapgen.KeepGraph, Steps: 100, Capacity: 300 << 20, MaxSplitSize: 40 << 20, RecordFrom: 2},
	{Loop: snapgen.Train, Steps: 4, Capacity: 1 << 30, Request: 900 << 20},
	{Loop: snapgen.Train, Steps: 4, Capacity: 1 << 30, Request: 900 << 20, MaxEntries: 300},
}

// TestReplayAgreesWithGenerated holds the replay under the recorded
// setting to every generated snapshot: it reserves what the snapshot's
// segments held after every run of segment entries, and runs out of
// memory where the snapshot did.
func TestReplayAgreesWithGenerated(t *testing.T) {
	for _, cfg := range generatedCases {
		t.Run(fmt.Sprintf("%+v", cfg), func(t *testing.T) {
			ex := explainBytes(t, generated(t, cfg), explain.Options{})
			if v := ex.Validation; !v.Agrees || v.Compared == 0 || !ex.SeedExact || v.SameAddress != v.Allocs {
				t.Errorf("validation %+v, seed exact %v; want agreement, every block at the snapshot's address", v, ex.SeedExact)
			}
			if ex.RecordedFrom != "snapshot" || ex.Recorded.Conf != confOf(cfg) || ex.Recorded.MaxSplitSize != cfg.MaxSplitSize {
				t.Errorf("recorded %+v from %s; want %q from the snapshot's allocator_settings", ex.Recorded, ex.RecordedFrom, confOf(cfg))
			}
		})
	}
}

func confOf(cfg snapgen.Config) string {
	if cfg.MaxSplitSize == 0 {
		return ""
	}
	return fmt.Sprintf("max_split_size_mb:%d", cfg.MaxSplitSize>>20)
}

// handMade are the snapshots of traces/torchsnap/testdata that
// make_snapshots.py builds by hand, to test the reader: no allocator made
// their histories (a 4 KiB block in a large segment, an alloc on stream
// 94 in a segment of stream 0), so no replay need agree with them.
var handMade = map[string]bool{
	"clean-p0.pickle": true, "clean-p2.pickle": true, "clean-p4.pickle": true,
	"clean-p5.pickle": true, "reuse.pickle": true, "twodev.pickle": true,
}

// expandablePeak is the peak reserved bytes of the snapshots recorded
// under expandable segments, as the model counts them (tlcheck replay's
// "peak reserved"): what a replay under their setting must reach.
var expandablePeak = map[string]uint64{"expandable.pickle": 232783872, "expandable-bug.pickle": 232783872}

// TestReplayAgreesWithRealSnapshots: the same on every snapshot PyTorch
// wrote in the repository's testdata (real-cuda.pickle: 3 SGD steps, a
// side stream, blocks live before recording began, empty_cache()).
func TestReplayAgreesWithRealSnapshots(t *testing.T) {
	files, _ := filepath.Glob("../traces/torchsnap/testdata/*.pickle")
	real := 0
	for _, f := range files {
		if handMade[filepath.Base(f)] {
			continue
		}
		real++
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ex := explainBytes(t, b, explain.Options{})
		if ex.Recorded.ExpandableSegments {
			// Recorded under expandable segments: the allocator reserves
			// its own range of addresses (9/8 of a capacity not known
			// here), so no block lands at the snapshot's address; what is
			// mapped must agree, and the recorded setting's peak be the
			// snapshot's (tlcheck replay's peak reserved).
			if v := ex.Validation; !v.Agrees || v.Compared == 0 || v.Allocs == 0 || ex.RecordedFrom != "snapshot" {
				t.Errorf("%s: validation %+v, recorded %s from %s; want agreement under the snapshot's expandable_segments", f, v, ex.Recorded, ex.RecordedFrom)
			}
			if w := ex.WhatIf[0]; !w.Modelled || w.PeakReserved != expandablePeak[filepath.Base(f)] {
				t.Errorf("%s: the recorded setting's what-if %+v; want peak reserved %d", f, w, expandablePeak[filepath.Base(f)])
			}
			continue
		}
		if v := ex.Validation; !v.Agrees || v.Compared == 0 || !ex.SeedExact || v.SameAddress != v.Allocs {
			t.Errorf("%s: validation %+v, seed exact %v; want agreement, every block at the snapshot's address", f, v, ex.SeedExact)
		}
	}
	if real == 0 {
		t.Fatal("no snapshot PyTorch wrote in traces/torchsnap/testdata")
	}
}

// TestHandMadeSnapshots: snapshots no allocator wrote are explained
// without an error, and their replays say they disagree where they do.
func TestHandMadeSnapshots(t *testing.T) {
	for name := range handMade {
		b, err := os.ReadFile(filepath.Join("../traces/torchsnap/testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		ex := explainBytes(t, b, explain.Options{})
		if !ex.Validation.Agrees && ex.Validation.Disagreement == "" {
			t.Errorf("%s: a disagreement without a word", name)
		}
		var text bytes.Buffer
		if err := explain.WriteText(&text, ex); err != nil || text.Len() == 0 {
			t.Errorf("%s: text %v", name, err)
		}
	}
}
