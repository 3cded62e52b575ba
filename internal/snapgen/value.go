package snapgen

import (
	"fmt"

	"github.com/tlcheck/tlcheck/impl/gpu"
)

// value is the snapshot as the Python value _snapshot() returns, its keys
// in PyTorch 2.11's order.
func (s *Snapshot) value() dict {
	segs := make([]any, 0, len(s.Segments))
	for _, sg := range s.Segments {
		var allocated, active, requested uint64
		blocks := make([]any, 0, len(sg.Blocks))
		for i, b := range sg.Blocks {
			if b.State != gpu.StateInactive {
				active += b.Size
				requested += b.Requested
			}
			if b.State == gpu.StateAllocated {
				allocated += b.Size
			}
			blocks = append(blocks, dict{
				{"address", uint64(b.Addr)}, {"size", b.Size}, {"requested_size", b.Requested},
				{"state", b.State}, {"frames", frames(sg.BlockFrames[i])},
			})
		}
		kind := "large"
		if sg.Small {
			kind = "small"
		}
		segs = append(segs, dict{
			{"device", 0}, {"address", uint64(sg.Addr)}, {"total_size", sg.Size},
			{"allocated_size", allocated}, {"active_size", active}, {"requested_size", requested},
			{"stream", int64(sg.Stream)}, {"segment_type", kind}, {"segment_pool_id", tuple{0, 0}},
			{"is_expandable", false}, {"frames", frames(sg.Frames)}, {"blocks", blocks},
		})
	}
	trace := make([]any, 0, len(s.Entries))
	for _, e := range s.Entries {
		trace = append(trace, dict{
			{"action", e.Action}, {"addr", e.Addr}, {"size", e.Size}, {"stream", e.Stream},
			{"time_us", e.TimeUS}, {"compile_context", "N/A"}, {"user_metadata", ""},
			{"frames", frames(e.Frames)},
		})
	}
	annots := make([]any, 0, len(s.Annotations))
	for _, a := range s.Annotations {
		annots = append(annots, dict{{"stage", a.Stage}, {"name", a.Name}, {"device", 0}, {"time_us", a.TimeUS}})
	}
	return dict{
		{"segments", segs},
		{"device_traces", []any{trace}},
		{"allocator_settings", s.settings()},
		{"external_annotations", annots},
	}
}

// settings is allocator_settings, as PyTorch 2.11 writes it.
func (s *Snapshot) settings() dict {
	conf, split := "", int64(-1)
	if m := s.Config.MaxSplitSize; m > 0 {
		conf, split = fmt.Sprintf("max_split_size_mb:%d", m>>20), int64(m)
	}
	div := dict{}
	for n := 1; n <= 32768; n *= 2 {
		div = append(div, kv{fmt.Sprint(n), 0})
	}
	return dict{
		{"PYTORCH_CUDA_ALLOC_CONF", conf}, {"max_split_size", split},
		{"garbage_collection_threshold", 0.0}, {"expandable_segments", false},
		{"pinned_num_register_threads", 1}, {"release_lock_on_cudamalloc", false},
		{"pinned_use_cuda_host_register", false}, {"graph_capture_record_stream_reuse", false},
		{"roundup_power2_divisions", div},
	}
}

func frames(fs []Frame) []any {
	out := make([]any, 0, len(fs))
	for _, f := range fs {
		out = append(out, dict{{"name", f.Name}, {"filename", f.File}, {"line", f.Line}})
	}
	return out
}
