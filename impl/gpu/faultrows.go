package gpu

import "github.com/tlcheck/tlcheck/impl"

// The pools' faults (EnginePool), caught by the pool property of package
// properties. A new one goes at the end.
var (
	FaultPoolDuplicateFreeEntry = impl.DeclareFault(impl.FaultInfo{Name: "pool-duplicate-free-entry", Engine: impl.EnginePool,
		Summary: "the persistent pool has no duplicate-pointer guard: a pointer put back twice is queued twice and handed to two tensors",
		Bug:     "TensorLogic's GPU pool (crates/tl_runtime/src/tensor_pool.rs) can be handed the same pointer twice by a release path that runs twice; without a guard it queues the pointer twice and gives it to two live tensors, which overwrite each other. Its release now checks the free list first (list.contains(&ptr): already pooled, return), the duplicate-pointer guard that issue 10 attributes to commits ab9a391 and 07bf4ab.",
		Trigger: "p=Persistent; a=Acquire(256,f32); Release(a); Release(a) [queued twice]; b=Acquire(256,f32); c=Acquire(256,f32) [b and c at one address: pool_get over a live pool block]"})
	FaultPoolKeyNeverMatches = impl.DeclareFault(impl.FaultInfo{Name: "pool-key-never-matches", Engine: impl.EnginePool,
		Summary: "the persistent pool's lookup key never equals the key a tensor was stored under, so nothing is ever reused",
		Bug:     "A pool whose release files a tensor under a key that its acquire never rebuilds misses on every acquire and allocates afresh while released tensors pile up unused: a 0% hit rate and a pool that only grows, the shape of the fix issue 10 attributes to TensorLogic commit 51ac503. TensorLogic's pool keys both sides by (num_elements, dtype_id, device_id) alone.",
		Trigger: "p=Persistent; a=Acquire(256,f32); Release(a); b=Acquire(256,f32) [a miss: a new dev_malloc though a's block is free under the same key]"})
	FaultPoolSplitRemainderLost = impl.DeclareFault(impl.FaultInfo{Name: "pool-split-remainder-lost", Engine: impl.EnginePool,
		Summary: "the caching allocator splits a block and drops the remainder: reserved memory that no block covers and no request can use",
		Bug:     "In PyTorch's alloc_found_block the remainder of a split goes back into the pool (pool.insert_into_blocks(remaining)) and stays linked to its neighbours; an allocator that forgets it leaks the rest of the segment for ever, and the segment can never be freed whole, so empty_cache cannot return it: the reserved-but-unusable memory users report as fragmentation.",
		Trigger: "c=Caching; a=Malloc(512) [splits a 2 MiB segment]; Free(a); EmptyCache [the segment is not whole: it stays reserved]"})
	FaultPoolFreeNoMerge = impl.DeclareFault(impl.FaultInfo{Name: "pool-free-no-merge", Engine: impl.EnginePool,
		Summary: "the caching allocator does not merge a freed block with its free neighbours: a free segment stays in pieces, cannot be released, and a later large request fails with a false out-of-memory",
		Bug:     "PyTorch's free_block merges a freed block with its previous and next blocks (try_merge_blocks) when they are free and wait for no event; without it a segment freed piece by piece stays split, release_cached_blocks frees only whole segments, and a request that the device could serve fails with CUDA out of memory (the fragmentation PyTorch users report).",
		Trigger: "c=Caching (capacity 20 MiB); a=Malloc(2 MiB); b=Malloc(2 MiB); Free(a); Free(b) [two free neighbours]; Malloc(20 MiB) [out of memory though nothing is allocated]"})
	FaultPoolStatsDrift = impl.DeclareFault(impl.FaultInfo{Name: "pool-stats-drift", Engine: impl.EnginePool,
		Summary: "the caching allocator's free takes the requested size, not the block's rounded size, off allocated_bytes, so memory_stats() drifts from the blocks",
		Bug:     "PyTorch's free() decreases allocated_bytes by block->size, the rounded size that malloc added; requested_bytes is the counter of the user's sizes. Mixing the two makes allocated_bytes grow with every rounded request, the kind of drift that turns memory_stats() and the OOM message into fiction.",
		Trigger: "c=Caching; a=Malloc(1000) [allocated_bytes 1024]; Free(a) [allocated_bytes.current 24, not 0]"})
	FaultPoolReuseOldest = impl.DeclareFault(impl.FaultInfo{Name: "pool-reuse-oldest", Engine: impl.EnginePool,
		Summary: "the persistent pool's acquire hands back the oldest tensor released under a key, not the last one released",
		Bug:     "TensorLogic's persistent pool keeps each key's free tensors in a Vec and acquire pops the last one pushed (LIFO), whose memory is the most recently touched and still warm in the caches; a free list read from the front (a queue, or remove(0) for pop()) is the generic slip that turns it FIFO: every acquire gets the coldest buffer, and a replay of a trace recorded with the real pool sees other addresses reused than it recorded.",
		Trigger: "p=Persistent; a=Acquire(256,f32); b=Acquire(256,f32); Release(a); Release(b); c=Acquire(256,f32) [c is a, want b]"})
	FaultPoolPreallocExactFit = impl.DeclareFault(impl.FaultInfo{Name: "pool-prealloc-exact-fit", Engine: impl.EnginePool,
		Summary: "a tensor that exactly fills what is left of the persistent pool's preallocation is not carved from it but reserved as a segment of its own",
		Bug:     "An off-by-one in a bump allocator's bounds check (offset + size < capacity where <= is meant), the generic class of fence-post bug: TensorLogic carves new tensors from the TL_GPU_PREALLOCATE_MB segment while they fit; with a strict comparison the last tensor that would fill it exactly goes to the device instead, so the preallocation is never used up and the pool reserves more than it was told to.",
		Trigger: "p=Persistent{Preallocate 1 MiB}; a=Acquire(262144,f32) [exactly 1 MiB: a new dev_malloc, not the preallocated segment's address]"})
	FaultPoolWorstFit = impl.DeclareFault(impl.FaultInfo{Name: "pool-worst-fit", Engine: impl.EnginePool,
		Summary: "the caching allocator's get_free_block takes the largest free block of the stream instead of the smallest that fits",
		Bug:     "PyTorch's get_free_block takes pool.blocks.lower_bound(&key), the first block in (stream, size, address) order not below the request: the best fit. Taking the end of the stream's range instead (the generic best-fit/worst-fit slip of a sorted free list) splits the largest block for every small request, so a later large request finds no block big enough and the allocator reserves a new segment or fails with out of memory while fitting memory is cached.",
		Trigger: "c=Caching; a=Malloc(2 MiB) [a 20 MiB segment, 18 MiB left free]; b=Malloc(30 MiB); Free(b); Malloc(2 MiB) [b's 30 MiB block, not the 18 MiB one]"})
	FaultPoolReleaseWholeCache = impl.DeclareFault(impl.FaultInfo{Name: "pool-release-whole-cache", Engine: impl.EnginePool,
		Summary: "with max_split_size set, malloc skips release_available_cached_blocks and frees the whole cache, counting a retry",
		Bug:     "PyTorch's malloc, when no block fits and cudaMalloc fails, first calls release_available_cached_blocks (with max_split_size set, it frees only as many oversize blocks as the request needs, no retry counted) and only then release_cached_blocks with num_alloc_retries++; the first round exists for allocators configured with max_split_size_mb. An allocator that goes straight to the second round empties the whole cache for one request, counts a retry that should not be, and frees segments the next requests would have reused.",
		Trigger: "c=Caching{MaxSplitSize 24 MiB, capacity 48 MiB}; a=Malloc(24 MiB); b=Malloc(24 MiB); Free(a); Free(b); Malloc(5 MiB) [both segments freed and num_alloc_retries 1; want one freed, 44 MiB reserved, no retry]"})
)
