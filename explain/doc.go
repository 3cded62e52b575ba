// Package explain says why a PyTorch program ran out of device memory,
// and what would have fit: from a memory snapshot taken at the error
// (the oom entry that _record_memory_history writes; PyTorch users dump
// one from torch._C._cuda_attach_out_of_memory_observer), it replays the
// trace's allocations and frees through impl/gpu's CachingAllocator (held
// to PyTorch's on a real GPU by package cudarec) under the setting the
// snapshot was recorded with and under others.
//
//	r, err := torchsnap.NewReader(f)
//	ex, err := explain.Explain(r, explain.Options{})   // DefaultSettings, recorded as the default
//	explain.WriteText(os.Stdout, ex)                     // or WriteJSON
//
// The contract:
//
//   - The explanation of the last oom entry: the request (rounded, as
//     PyTorch writes it), the device's free bytes then, the capacity the
//     process had (reserved then plus free, unless given), allocated and
//     reserved bytes at the error, the cache's free bytes and largest free
//     block by pool and stream, and the sites whose live blocks held the
//     most. The allocator's state comes from the replay under the
//     recorded setting, which is validated first (below).
//   - What if: for each setting, the replay's peak reserved and allocated
//     bytes up to the error (the request included where it fits), whether
//     the request fits, and where the replay itself ran out first.
//     expandable_segments:True is replayed with impl/gpu's expandable
//     segments (gpu.CachingOptions.ExpandableSegments); a setting
//     impl/gpu does not model (roundup_power2_divisions,
//     garbage_collection_threshold) is listed as such and not replayed. Without an oom entry the replays run to
//     the end, on a device of the given capacity or without limit.
//   - The recorded setting is the caller's, else the snapshot's
//     allocator_settings, else PyTorch's default; Explanation says which.
//     One impl/gpu does not model (roundup_power2_divisions) cannot be
//     replayed: the explanation then has the request alone, and says so.
//   - Validation: under the recorded setting the replay must reserve what
//     the snapshot's own segments held after every alloc, free and oom
//     entry (so at every run of segment_alloc and segment_free), and run
//     out of memory where the snapshot did. Validation says where it
//     first disagrees; then the figures are the model's, not the run's.
//     That replay puts each segment where the snapshot has it (the
//     allocator breaks ties between free blocks by address), and counts
//     the allocations it hands out at the snapshot's own address: all of
//     them, on every generated snapshot and real-cuda.pickle, and on 804
//     of the 806 programs recorded on an H100 (impl/gpu/testdata/cuda,
//     written as snapshots: TestReplayAgreesWithGPU names the others).
//   - Under expandable segments the snapshot's reserved bytes are its
//     mapped ranges (segment_map and segment_unmap entries, dev_map and
//     dev_unmap as the reader gives them), a run of unmaps a release as
//     a run of segment_free entries is; what was live before the
//     recording is carved range by range (seedExpandable in seedexp.go).
//     The allocator reserves its own addresses, so no block lands at the
//     snapshot's: such a replay validates by what it maps alone
//     (expandable.pickle: 94 comparisons, its 222 MiB peak reserved).
//   - A segment_free run before a malloc is the malloc's own release when
//     no cached block could serve it and the segments it made would not
//     have fit beside what was held (the capacity known), else
//     torch.cuda.empty_cache(), replayed as EmptyCache. A block the snapshot shows waiting for another stream
//     (torchsnap.Reader.Pending) and given back in such a release waits in
//     the replay too, until the replay's allocator releases its cache.
//   - What was live before the recording began is made first, segment by
//     segment (see seed in seed.go); a segment no request reserves (or
//     that the device cannot hold) is left out, and Explanation.SeedExact
//     says the replays approximate. Blocks freed on another stream are
//     taken back at free_completed, as the reader takes them.
//   - Explanation and its parts are plain values with JSON tags: the
//     shape WriteJSON writes and the HTML page shows.
//   - Memory: the snapshot's events (about 32 bytes each) and one
//     allocator per setting, one setting at a time.
//
// This package imports impl/gpu and the trace readers, never the model.
package explain
