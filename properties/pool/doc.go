// Package pool is the pool property and its program language: the GPU
// allocators of package impl/gpu are not driven by runtime programs but by
// pool programs, checked after every call against their books and rules.
//
// A Program is a list of calls
// (malloc, free, record_stream, synchronize, empty_cache on the caching
// allocator; acquire, release and a second release on the persistent
// pool); Run runs one and, after every call, holds the allocator to
// its books and, for the persistent pool, to its rules stated again in the
// property (pool_persistent.go), so that no expected value is read back
// from the allocator or its device. The caching allocator's books are
// recounted from its snapshot, and the block each malloc returns and what
// it frees are held to PyTorch's rules stated again (pool_fit.go):
//
//	Fit         a malloc gets the best fit among the free blocks of its
//	            pool and stream (smallest, then lowest address) unless
//	            max_split_size rules it out, else a new segment of
//	            get_allocation_size's size
//	Release     a malloc frees and retries as PyTorch's does: nothing while
//	            a cached block serves it or the device has room; else
//	            release_available_cached_blocks's oversize blocks alone, no
//	            retry, when they make room; else every segment free as a
//	            whole, one retry
//	Tiling      each segment's blocks cover it exactly, in address order
//	Merged      no two free neighbours are left unmerged
//	Stats       every counter of memory_stats() equals the recount, per pool
//	Reserved    reserved_bytes and segment equal the device's; the
//	            persistent pool's device holds what its rules reserved
//	Live        the blocks in use are exactly those handed out
//	NoFalseOOM  out of memory only when the device cannot hold the segment
//	            and no segment is free as a whole (persistent: only when
//	            the rules find no room)
//	OverLimit   a request of 1 EiB or more is out of memory, nothing touched
//	EmptyCache  with everything freed, empty_cache returns every byte
//	Reuse       the persistent pool serves a key from its free list first,
//	            the last tensor released first
//	Place       a new tensor is carved from what is left of the
//	            preallocation when it fits, an exact fit included, else
//	            gets the next segment of the device
//	Guard       a second release of a pointer is refused
//	PoolStats   the persistent pool's counters equal the rules'
//	NeverReturns the persistent pool's device never gets bytes back
//	Model       the recorded trace, replayed, has no violation
//
// Language is the pool programs' harness.Language: the harness searches
// with Generate and shrinks with Shrink, as for every language; the
// tests state the property with rapid (as a state machine too) and gopter
// and show that every fault whose Engine is impl.EnginePool is caught.
package pool
