package explain_test

import (
	"bytes"
	"maps"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/explain"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/impl/gpu/cudarec"
	"github.com/tlcheck/tlcheck/internal/snapgen"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// TestReplayAgreesWithGPU holds the replay to PyTorch's caching allocator
// on a real GPU: each program recorded by impl/gpu/cudaprobe (malloc on
// three streams, free, record_stream, synchronize, empty_cache, out of
// memory under a cap; impl/gpu/testdata/cuda) is written as the snapshot
// _record_memory_history would have made of it, from what the GPU did
// (the addresses, and after each step memory_snapshot()'s segments and
// block states), and explained under its cap. The replay under the
// recording's setting must reserve what the GPU did after every entry,
// run out of memory where it did, and hand out every block at the GPU's
// address.
func TestReplayAgreesWithGPU(t *testing.T) {
	files, err := cudarec.ReadDir("../impl/gpu/testdata/cuda")
	if err != nil {
		t.Fatal(err)
	}
	programs, ooms, hidden, disagree := 0, 0, 0, 0
	for _, f := range files {
		if f.Header == nil {
			continue
		}
		for i := range f.Programs {
			p := &f.Programs[i]
			if testing.Short() && i%8 != 0 {
				continue
			}
			s, n, ok := snapshotOf(f.Header, p)
			if !ok {
				hidden++
				continue
			}
			var buf bytes.Buffer
			if err := s.WritePickle(&buf); err != nil {
				t.Fatal(err)
			}
			r, err := torchsnap.NewReader(&buf)
			if err != nil {
				t.Fatalf("%s %s: %v", f.Name, p.Name, err)
			}
			ex, err := explain.Explain(r, explain.Options{Capacity: p.Cap, Settings: []explain.Setting{}})
			if err != nil {
				t.Fatalf("%s %s: %v", f.Name, p.Name, err)
			}
			programs++
			ooms += n
			key := f.Name + " " + p.Name
			agrees := ex.Validation.Agrees && ex.Validation.SameAddress == ex.Validation.Allocs && ex.RecordedFrom == "snapshot"
			switch {
			case !agrees && !gpuDisagreements[key]:
				t.Errorf("%s: the replay disagrees with the GPU: validation %+v (recorded %s from %s)", key, ex.Validation, ex.Recorded, ex.RecordedFrom)
			case agrees && gpuDisagreements[key]:
				t.Errorf("%s: the replay agrees with the GPU now: take it off gpuDisagreements", key)
			}
			if !agrees {
				disagree++
			}
		}
	}
	t.Logf("%d programs, %d out-of-memory errors, %d disagree; %d programs left out, whose snapshots hide a segment freed and made again at its address", programs, ooms, disagree, hidden)
	if programs == 0 || ooms == 0 {
		t.Errorf("%d programs, %d out-of-memory errors: the recordings exercise too little", programs, ooms)
	}
}

// gpuDisagreements are the programs whose replay disagrees with the GPU,
// an open issue: two under max_split_size_mb, not yet understood. The
// test fails for any other, and for one of these that agrees.
var gpuDisagreements = map[string]bool{
	"split20.jsonl.gz split-0014": true, "split24.jsonl.gz split-0056": true,
}

// snapshotOf writes what the GPU did in program p as a snapshot's trace,
// and counts its out-of-memory errors. A segment's cudaMalloc and
// cudaFree show as a change of memory_snapshot()'s segments, except where
// a segment is freed and made again at its address in one step; ok is
// false where memory_stats()'s counts of them say that happened.
func snapshotOf(h *cudarec.Header, p *cudarec.Program) (s *snapgen.Snapshot, ooms int, ok bool) {
	count := func(st cudarec.Step, key string) int64 {
		if i := slices.Index(h.Keys, key); i >= 0 && i < len(st.Stats) && st.Stats[i] != nil {
			return *st.Stats[i]
		}
		return -1
	}
	var allocs, frees int64
	s = &snapgen.Snapshot{}
	if h.MaxSplitSize > 0 {
		s.Config.MaxSplitSize = uint64(h.MaxSplitSize)
	}
	add := func(action string, addr, size uint64, stream int) {
		s.Entries = append(s.Entries, snapgen.Entry{Action: action, Addr: addr, Size: size, Stream: int64(stream),
			TimeUS: 1_700_000_000_000_000 + int64(len(s.Entries))})
	}
	type live struct {
		size   uint64
		stream int
	}
	prev := map[uint64]uint64{} // segments after the step before
	ptr := map[int]uint64{}     // each malloc's block, by its id
	blocks := map[uint64]live{} // blocks handed out and not yet freed
	pending := map[uint64]live{}
	var segs []cudarec.Segment
	for _, st := range p.Steps {
		segs = st.Segs
		cur, state := map[uint64]uint64{}, map[uint64]string{}
		var reserved uint64
		for _, sg := range st.Segs {
			cur[sg.Addr] = sg.Size
			reserved += sg.Size
			at := sg.Addr
			for _, b := range sg.Blocks {
				state[at] = b.State
				at += b.Size
			}
		}
		if st.Op == "free" && !st.Noop {
			if a, ok := ptr[st.ID]; ok && a != 0 {
				b := blocks[a]
				delete(blocks, a)
				add("free_requested", a, b.size, b.stream)
				if state[a] == gpu.StatePendingFree {
					pending[a] = b
				} else {
					add("free_completed", a, b.size, b.stream)
				}
			}
		}
		// Blocks whose streams' work is done are freed when the allocator
		// processes its events, before the rest of the step.
		for _, a := range slices.Sorted(maps.Keys(pending)) {
			if state[a] != gpu.StatePendingFree {
				add("free_completed", a, pending[a].size, pending[a].stream)
				delete(pending, a)
			}
		}
		var made, freed int64
		for _, a := range slices.Sorted(maps.Keys(prev)) {
			if cur[a] != prev[a] {
				add("segment_free", a, prev[a], 0)
				freed++
			}
		}
		for _, a := range slices.Sorted(maps.Keys(cur)) {
			if prev[a] != cur[a] {
				add("segment_alloc", a, cur[a], 0)
				made++
			}
		}
		na, nf := count(st, "num_device_alloc"), count(st, "num_device_free")
		if na < 0 || nf < 0 || na-allocs != made || nf-frees != freed {
			return s, ooms, false
		}
		allocs, frees = na, nf
		prev = cur
		if st.Op != "malloc" {
			continue
		}
		switch {
		case st.Error == "oom":
			add("oom", p.Cap-reserved, gpu.RoundSize(st.Size), st.Stream)
			ooms++
		case st.Error == "" && st.Ptr != 0:
			add("alloc", st.Ptr, st.Size, st.Stream)
			ptr[st.ID] = st.Ptr
			blocks[st.Ptr] = live{st.Size, st.Stream}
		}
	}
	for _, sg := range segs {
		info := gpu.SegmentInfo{Addr: traces.Addr(sg.Addr), Size: sg.Size, Small: sg.Small, Stream: gpu.Stream(max(sg.Stream, 0))}
		at := sg.Addr
		for _, b := range sg.Blocks {
			info.Blocks = append(info.Blocks, gpu.BlockInfo{Addr: traces.Addr(at), Size: b.Size, Requested: uint64(max(b.Requested, 0)), State: b.State})
			at += b.Size
		}
		s.Segments = append(s.Segments, snapgen.Segment{SegmentInfo: info, BlockFrames: make([][]snapgen.Frame, len(info.Blocks))})
	}
	return s, ooms, true
}
