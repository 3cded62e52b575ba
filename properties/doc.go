// Package properties checks the runtime of package impl against the
// reference model of package model, over generated programs: the one place
// (with fuzz/ and cmd/) where the two meet.
//
// A Program is a program of the flat language (package flat, which holds
// its syntax: the call table, the byte codec, listings, the shrinker's
// passes): a sequence of runtime calls of layers 2 and 3, whose operands
// name objects by position among what the program knows when the step
// runs. This package makes those calls on impl's runtime: one invocation
// per row of flat's table (calls.go), each operand resolved against what
// the model holds alive, and layer 3's frames planned by the runtime's own
// planner (frames.go).
//
// Run drives the runtime with a program and feeds each event the runtime
// records (its calls and, with effects, its real frees) to a model.Checker.
// After every call it gathers what the properties need: the model's
// violations, whether the runtime refused the call with the model's kind,
// whether it recorded the call it was asked to make, and whether its state
// (live objects and counts, scope records, params) equals the model's:
// after every call, end's included, by a fast comparison
// (impl.Runtime.Matches) that tests hold to sameState and it to go-cmp's
// verdict field by field, go-cmp writing the diff. After the last step Run
// tears the program down the way a well-behaved caller would (scopes
// exited, params released), calls end, and, where the run failed, replays
// the written trace, the one the failure hands its user, through the model
// once more.
//
// The properties are named code over a run's Result (see Properties):
//
//	NoDoubleFree     no double free the runtime did not refuse
//	NoUseAfterFree   no use after free the runtime did not refuse
//	NoPrematureFree  no free of an object that still has references
//	NoStaleReuse     no action meant for an address's old object hits its new one
//	NoLeak           every object whose count reaches 0 is freed at once
//	Refines          after every call, the runtime's state, answer and record are the model's
//
// A run fails with the property broken at the earliest call. Shrink turns
// a failing program into a small one that fails the same way, and its
// Failure carries the run's trace: the file `tlcheck replay` rejects.
// Search hunts with generated programs from a seed. The tests state the
// same property twice more, with rapid's state machines and with gopter's
// commands, and show that every fault of impl.Catalog whose Engine is
// impl.EngineProgram is caught.
//
// # The pool property
//
// The GPU allocators of package impl/gpu are not driven by programs; the
// pool property (pool.go) drives them. A PoolProgram is a list of calls
// (malloc, free, record_stream, synchronize, empty_cache on the caching
// allocator; acquire, release and a second release on the persistent
// pool); RunPool runs one and, after every call, holds the allocator to
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
// SearchPool and ShrinkPool hunt and shrink as Search and Shrink do; the
// tests state the property with rapid (as a state machine too) and gopter
// and show that every fault whose Engine is impl.EnginePool is caught.
//
// # The autograd property
//
// An AutogradProgram (autograd.go) is a list of steps on the autograd
// engine of package impl/autograd, built over a recording Runtime: leaves,
// ops, views, in-place ops, backward, detach, scopes, ZeroGrad and
// ClearGrads, and freeing a graph (FreeGraph) or dropping a tensor (Drop),
// under either lifetime of the engine (TensorLogic's or PyTorch's).
// RunAutograd runs one, with the autograd faults switched on in the
// runtime's Config, and checks:
//
//	RuntimeUse  the engine never misuses the runtime (no *impl.Error)
//	Versions    an in-place op bumps every alias of its storage by one, and nothing else
//	ClearGrads  after ClearGrads no leaf keeps a grad
//	Held        PyTorch's lifetime: a tensor the program holds is alive
//	Model       the recorded trace, replayed by the model, has no violation
//
// SearchAutograd and ShrinkAutograd hunt and shrink as Search and Shrink
// do, and RunAutogradBytes is FuzzAutogradProgram's body; the tests show
// that every fault whose Engine is impl.EngineAutograd is caught.
package properties
