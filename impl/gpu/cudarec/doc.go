// Package cudarec holds impl/gpu's caching allocator to PyTorch's on a
// real GPU. The probe (impl/gpu/cudaprobe/probe.py) runs generated
// programs of malloc (torch.empty of n bytes on a stream), free (del),
// record_stream, stream synchronize and empty_cache under torch on a CUDA
// device, and records after every step what the malloc returned or
// refused, torch.cuda.memory_stats() and torch.cuda.memory_snapshot().
// Read reads such a recording; Replay runs one of its programs on a fresh
// gpu.CachingAllocator set up as the GPU's process was and compares every
// step; Compare does so for a folder of recordings and counts what they
// exercised.
//
// # What is compared
//
// After every step: the address each malloc returned (or that it raised
// torch.OutOfMemoryError, and the sizes its message names); every counter
// of memory_stats() that gpu.Stats has (current, peak, allocated and freed,
// for all pools and each; num_alloc_retries, num_ooms, num_device_alloc,
// num_device_free); every segment of memory_snapshot() (address, size,
// pool, stream) and every block of it (size, state, requested_size). A
// program agrees when every step does; Replay stops at the first step that
// differs, since the later ones inherit the difference.
//
// Left out, by name: the memory_stats() keys gpu.Stats lacks
// (Header.NotCompared: oversize_*, num_sync_all_streams, max_split_size),
// and the parts of the OOM message about the device (its capacity, what
// other processes hold).
//
// # What the replay takes from the recording
//
// What the allocator cannot decide and the GPU did: the address of each
// new segment (cudaMalloc's; the allocator breaks ties between free blocks
// of one size by address, so gpu.Device.PlaceWith puts each segment where
// CUDA did), the capacity (the probe sets it with
// set_per_process_memory_fraction, an arithmetic cap on what the
// allocator reserves, so out-of-memory and retries are the allocator's
// own), max_split_size_mb, and when each stream's work finished (Step's
// Before and Done, applied as gpu.CachingAllocator.Synchronize). The probe
// keeps a long torch.cuda._sleep queued on streams 1 and 2, so a stream
// finishes only when it is synchronized, or when the device is: cudaFree
// waits for the whole device, which the recordings show at every step that
// returned a segment.
//
// # The recording
//
// JSON Lines, gzipped or not: a header line (the device, torch, the
// configuration, the order of the memory_stats() keys), one line a program
// (its steps, each with what changed since the step before), and an end
// line when every program ran; or, for a configuration PyTorch may refuse,
// one config line saying whether the first allocation under it worked.
// The probe's docstring and impl/gpu/cudaprobe/README.md say how to make
// one.
package cudarec
