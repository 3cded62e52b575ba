// Package gpu is a simulated GPU and the two pool allocators that sit on
// it: PyTorch's CUDA caching allocator and TensorLogic's persistent pool.
// Everything they do is recorded as layer-4 trace events (traces/FORMAT.md,
// "Layer 4"): a segment reserved or returned is dev_malloc or dev_free, a
// block handed out or given back is pool_get or pool_put. Package model
// checks such a trace like any other, so every run can be replayed: no two
// live blocks overlap, every block lies in a live segment, nothing is used
// or put back after it was put back. This package never imports model.
//
// # The device
//
// NewDevice makes a device with a capacity; DevMalloc and DevFree are
// cudaMalloc and cudaFree; Reserve, DevMap, DevUnmap and Release are
// CUDA's virtual memory calls (reserve.go). Addresses start at Base, are 512-byte aligned
// and deterministic (first fit), and a request past the capacity is an
// *OutOfMemoryError.
//
// # The caching allocator (caching.go, release.go)
//
// CachingAllocator follows c10/cuda/CUDACachingAllocator.cpp:
//   - sizes round up to 512 B (RoundSize); a rounded size of at most 1 MiB
//     is served by the small pool, from 2 MiB segments; larger sizes by the
//     large pool, from 20 MiB segments below 10 MiB, else from a segment of
//     the size rounded up to 2 MiB (AllocationSize);
//   - a request takes the best fit among the free blocks of its pool and
//     stream, ordered by (stream, size, address); the block is split when
//     the rest is at least 512 B (small pool) or more than 1 MiB (large
//     pool), the allocation taking the low addresses;
//   - a freed block merges with its free neighbours;
//   - with CachingOptions.MaxSplitSize (max_split_size_mb: a whole number
//     of MiB, at least 20, else NewCaching refuses it), blocks of that size or
//     more are never split and serve only requests of that size or more,
//     within 20 MiB of their own size;
//   - a request of MaxRequest (1 EiB) or more is an *OutOfMemoryError
//     before anything else, as PyTorch's allocate refuses it: nothing is
//     freed, retried or counted;
//   - when the device cannot hold a new segment, Malloc frees cached
//     blocks in two rounds, as PyTorch's malloc does. With MaxSplitSize
//     set, release_available_cached_blocks first returns oversize cached
//     blocks of the request's pool and stream, only as many as it needs
//     (the smallest one large enough, else the largest ones first), with
//     no retry counted and no stream waited for, so a block pending on
//     another stream stays pending; then, if that was not enough,
//     release_cached_blocks waits for every stream, returns every cached
//     segment that is free as a whole, and the request is retried once
//     (num_alloc_retries). Then an *OutOfMemoryError says what is
//     allocated, reserved and free;
//   - EmptyCache returns every cached segment that is free as a whole;
//   - RecordStream marks a block as used by another stream: when freed, it
//     waits for that stream (Synchronize) before it is reused or merged;
//     the next Malloc or EmptyCache releases the blocks whose streams are
//     done, stream by stream, from the highest stream number down;
//   - Stats has torch.cuda.memory_stats()'s counters and arithmetic, and
//     Snapshot the segments and blocks of torch.cuda.memory_snapshot(),
//     a free block's requested_size included (what its last user asked
//     for, as PyTorch leaves it).
//
// Package cudarec holds all of this to PyTorch 2.11 on an H100: programs
// recorded there (testdata/cuda) replay here step by step, every counter
// and every block alike.
//
// With CachingOptions.ExpandableSegments, each pool and stream maps pages
// of one reservation instead (expandable.go; Device.Reserve, DevMap and
// DevUnmap, recorded as dev_map and dev_unmap), as PyTorch does with
// expandable_segments:True; the recordings of package cudarec do not
// cover it.
//
// Simplified: one device; no CUDA graphs, garbage
// collection threshold, per-process memory fraction (a Device's capacity
// is its cap), free-memory callbacks or roundup_power2_divisions; no
// oversize_*, num_sync_all_streams or max_split_size counters. A stream's
// work is done only when Synchronize says so: on a GPU it also finishes
// by itself, and cudaFree waits for the whole device, so a replay of a
// GPU's run says when (package cudarec). The order in which PyTorch
// visits streams with pending events is its hash map's, which hangs on
// the CUDA stream handles; the order here is the one the recordings
// showed for streams 1 and 2. Segment addresses are first fit from Base
// unless Device.PlaceWith says where. The out-of-memory message names the
// segment it tried to reserve, as PyTorch's names alloc_size, with sizes
// written as PyTorch's format_size writes them.
//
// # The persistent pool (persistent.go)
//
// PersistentPool is TensorLogic's V4.0 pool (crates/tl_runtime,
// tensor_pool.rs): it never gives memory back; a released tensor is filed
// under its Key, (elements, dtype, device), and reused by the next Acquire
// of that key, the last released first; a pointer released twice is filed once (the duplicate
// guard). PoolStats and Dump are its statistics; PersistentOptions'
// PreallocateBytes (TL_GPU_PREALLOCATE_MB, PreallocateFromEnv) reserves one
// segment up front that new tensors are carved from. Unlike the seed's,
// whose acquire is switched off, this pool reuses.
//
// # Errors and faults
//
// A call that is refused returns an error naming the call and the address,
// and never panics; what it records is what its comment says. The pool
// faults (faultrows.go, rows of impl.Catalog with Engine "pool") are
// switched on through the options' Faults.
//
// Neither allocator is safe for concurrent use.
package gpu
