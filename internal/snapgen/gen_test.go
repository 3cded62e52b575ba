package snapgen

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// read reads a generated snapshot back with torchsnap's reader.
func read(t *testing.T, s *Snapshot) *torchsnap.Reader {
	t.Helper()
	var buf bytes.Buffer
	if err := s.WritePickle(&buf); err != nil {
		t.Fatal(err)
	}
	r, err := torchsnap.NewReader(&buf)
	if err != nil {
		t.Fatalf("torchsnap cannot read the generated snapshot: %v", err)
	}
	return r
}

// TestGeneratedSnapshotsCheckClean holds every kind of loop, recorded from
// the start, mid-run and through a ring buffer, to the reference model:
// a snapshot PyTorch could write checks clean.
func TestGeneratedSnapshotsCheckClean(t *testing.T) {
	for _, cfg := range []Config{
		{Loop: Train},
		{Loop: KeepLoss, Seed: 7},
		{Loop: KeepGraph, Steps: 6},
		{Loop: Train, RecordFrom: 3},
		{Loop: KeepLoss, MaxEntries: 500},
		{Loop: Train, MaxSplitSize: 20 << 20, Seed: 3},
		{Loop: KeepGraph, Capacity: 200 << 20, Steps: 100},
	} {
		s, err := Generate(cfg)
		if err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
		rep, err := model.Replay(read(t, s))
		if err != nil {
			t.Fatalf("%+v: replay: %v", cfg, err)
		}
		if len(rep.Violations) != 0 {
			t.Errorf("%+v: %d violations, the first: %v", cfg, len(rep.Violations), rep.Violations[0])
		}
	}
}

// TestOOMEndsTheSnapshot: a loop past the device's capacity ends in an oom
// entry whose free bytes and request are the allocator's.
func TestOOMEndsTheSnapshot(t *testing.T) {
	s, err := Generate(Config{Loop: KeepGraph, Steps: 100, Capacity: 200 << 20})
	if err != nil {
		t.Fatal(err)
	}
	last := s.Entries[len(s.Entries)-1]
	if !s.OOM || last.Action != "oom" {
		t.Fatalf("OOM %v, last entry %q; want an oom entry last", s.OOM, last.Action)
	}
	if last.Addr >= 200<<20 || last.Size == 0 {
		t.Errorf("oom entry: free %d, request %d", last.Addr, last.Size)
	}
	if len(s.Iterations) >= 100 {
		t.Errorf("%d iterations ran on 200 MiB; want fewer than 100", len(s.Iterations))
	}
}

func TestEveryEventRead(t *testing.T) {
	s, err := Generate(Config{Loop: Train, Steps: 3})
	if err != nil {
		t.Fatal(err)
	}
	r := read(t, s)
	var ev traces.Event
	n := 0
	for {
		err := r.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	want := 0
	for _, e := range s.Entries {
		if e.Action != "free_requested" {
			want++
		}
	}
	if n != want {
		t.Errorf("read %d events, want %d (one per entry but free_requested)", n, want)
	}
}
