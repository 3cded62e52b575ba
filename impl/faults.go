package impl

import (
	"fmt"
	"slices"
	"strings"
)

// Fault names a documented bug that can be switched on (see Catalog).
type Fault string

// The fault catalog. Each fault reproduces a bug from the history of the
// TensorLogic runtime (github.com/JunSuzukiJapan/tl, crates/tl_runtime and
// docs/dev/MEMORY_MANAGEMENT_STRATEGY.md) or a bug of its shape, and each
// shows in a run's recorded trace (a free too many, a free missing, an
// allocation on a live address) or in its State:
//
//	fault                           what goes wrong
//	stale-record-not-purged         a dead object's record releases the new object at its address
//	scope-exit-releases-dead        scope exit frees a dead object's record again
//	unregister-releases             a move (unregister) also releases: the moved value is freed
//	unregister-oldest-record        unregister removes the oldest record, not the newest
//	struct-unregister-deep          unregistering a struct unregisters its fields too
//	struct-unregister-none          unregistering a struct does nothing
//	struct-init-no-acquire          struct_init does not acquire its fields
//	struct-death-no-field-release   a dying struct does not release its fields
//	struct-death-fields-only        a dying struct releases its fields but is not freed
//	register-duplicates-record      register pushes two records
//	register-counts-without-record  register of a recorded object counts instead of recording
//	param-register-no-acquire       param_register does not acquire
//	param-reregister-no-release-old re-registering a name does not release the old object
//	param-reregister-release-first  re-registering a name releases the old object first
//	release-ignores-zero            a count that reaches 0 does not free
//	zst-allocates                   a zero-sized value gets a dangling address, not NULL
//	heap-double-handout             the heap hands a freed block out twice
//	scope-exit-oldest-first         scope exit releases its records oldest first
//	arena-grow-frees-old            a slot that grows frees its old buffer at once
//	planner-shares-overlapping      the planner shares a slot between lifetimes that meet at a statement
//	method-without-frame            a method runs without a frame of its own
//	registry-count-outside-lock     a buffer's count is updated outside its shard's lock (impl/registry)
//	registry-alias-underflow        unregistering an alias twice decrements twice, below zero (impl/registry)
//
//	pool-duplicate-free-entry       the persistent pool queues a pointer put back twice and hands it out twice (impl/gpu)
//	pool-key-never-matches          the persistent pool's lookup key never matches: nothing is reused (impl/gpu)
//	pool-split-remainder-lost       the caching allocator drops a split block's remainder (impl/gpu)
//	pool-free-no-merge              the caching allocator does not merge a freed block with its free neighbours (impl/gpu)
//	pool-stats-drift                the caching allocator's allocated_bytes drifts from its blocks (impl/gpu)
//
// The codegen faults are not the runtime's: they are bugs of the code a
// compiler emits around calls, returns, branches and loops, and only the
// lowering of source programs (package impl/lang) has them, when the
// runtime it drives has them on (HasFault):
//
//	return-cleans-innermost-scope   an early return exits only the innermost scope
//	break-in-if-skips-cleanup       a break or continue inside an if exits no scope
//	block-result-freed              an if or block expression's value is freed by its block's exit
//	caller-does-not-register-result the caller does not register the value a call returns
//	callee-releases-borrowed        the callee releases its borrowed arguments
//	returned-value-registered-twice the caller registers a returned value twice
//	move-still-released             a move at a variable's last use leaves its record, released at scope exit
//	emit-retain-over-retains        a struct literal retains its tensor fields again
//	sret-source-kept                a struct returned into the caller's destination is never released at its source
//	loop-life-ends-first-loop       a variable used in two loops is kept live only to the first one's end
//
// The autograd faults are bugs of the graph engine of package
// impl/autograd, which allocates its tensors from a Runtime and asks it
// (HasFault) which of them are on; the Runtime's own calls are unchanged:
//
//	autograd-struct-retain                every graph tensor is retained struct-style, and no one releases it
//	autograd-no-grad-clearing             ClearGrads does nothing: gradients accumulate across iterations
//	autograd-scope-frees-graph            scope exit frees a tensor the graph still needs
//	autograd-backward-keeps-intermediates backward does not free the graph's non-leaf intermediates
//	autograd-detach-keeps-graph           detach leaves the upstream graph alive
//	autograd-saved-never-released         a node's saved tensors are not released after it runs
//	autograd-view-own-version             a view gets a version counter of its own, not its base's
//	autograd-double-bump                  one in-place op bumps the version counter twice
//	autograd-snapshot-table-never-cleared checkpoint snapshots stay in a global table the graph's release never clears
//	autograd-restore-wrong-version        the snapshot filed for a saved version is taken after the in-place write: backward restores the next version
//	autograd-snapshot-shallow             a snapshot is the saved storage itself, not a copy: the in-place op it guards overwrites it
//
// Catalog gives each one's summary, the bug it reproduces, its trigger and
// the engine that hunts it: the flat-program engines (properties, fuzz)
// drive Runtime, and only the faults whose Engine is EngineProgram are
// theirs to catch; the registry's faults are caught by the
// linearizability check of impl/registry/lincheck, the pool's by the pool
// property of package properties, which drives the allocators of impl/gpu,
// the codegen faults by source programs (EngineSource), and the autograd
// faults by autograd programs (EngineAutograd). A fault may be caught by a
// second engine too (FaultInfo.Also): source programs keep their tensor
// variables in planned arena slots, so they catch the slot planner's and
// the arena's faults as well.
const (
	FaultStaleRecordNotPurged        Fault = "stale-record-not-purged"
	FaultScopeExitReleasesDead       Fault = "scope-exit-releases-dead"
	FaultUnregisterReleases          Fault = "unregister-releases"
	FaultUnregisterOldestRecord      Fault = "unregister-oldest-record"
	FaultStructUnregisterDeep        Fault = "struct-unregister-deep"
	FaultStructUnregisterNone        Fault = "struct-unregister-none"
	FaultStructInitNoAcquire         Fault = "struct-init-no-acquire"
	FaultStructDeathNoFieldRelease   Fault = "struct-death-no-field-release"
	FaultStructDeathFieldsOnly       Fault = "struct-death-fields-only"
	FaultRegisterDuplicatesRecord    Fault = "register-duplicates-record"
	FaultRegisterCountsNoRecord      Fault = "register-counts-without-record"
	FaultParamRegisterNoAcquire      Fault = "param-register-no-acquire"
	FaultParamReregisterNoRelease    Fault = "param-reregister-no-release-old"
	FaultParamReregisterReleaseFirst Fault = "param-reregister-release-first"
	FaultReleaseIgnoresZero          Fault = "release-ignores-zero"
	FaultZSTAllocates                Fault = "zst-allocates"
	FaultHeapDoubleHandout           Fault = "heap-double-handout"
	FaultScopeExitOldestFirst        Fault = "scope-exit-oldest-first"
	FaultArenaGrowFreesOld           Fault = "arena-grow-frees-old"
	FaultPlannerSharesOverlapping    Fault = "planner-shares-overlapping"
	FaultMethodWithoutFrame          Fault = "method-without-frame"
	FaultRegistryCountOutsideLock    Fault = "registry-count-outside-lock"
	FaultRegistryAliasUnderflow      Fault = "registry-alias-underflow"
	FaultPoolDuplicateFreeEntry      Fault = "pool-duplicate-free-entry"
	FaultPoolKeyNeverMatches         Fault = "pool-key-never-matches"
	FaultPoolSplitRemainderLost      Fault = "pool-split-remainder-lost"
	FaultPoolFreeNoMerge             Fault = "pool-free-no-merge"
	FaultPoolStatsDrift              Fault = "pool-stats-drift"
	FaultReturnCleansInnermost       Fault = "return-cleans-innermost-scope"
	FaultBreakInIfSkipsCleanup       Fault = "break-in-if-skips-cleanup"
	FaultBlockResultFreed            Fault = "block-result-freed"
	FaultCallerNoRegister            Fault = "caller-does-not-register-result"
	FaultCalleeReleasesBorrowed      Fault = "callee-releases-borrowed"
	FaultRegisterTwice               Fault = "returned-value-registered-twice"
	FaultMoveStillReleased           Fault = "move-still-released"
	FaultEmitRetainOverRetains       Fault = "emit-retain-over-retains"

	FaultAutogradStructRetain               Fault = "autograd-struct-retain"
	FaultAutogradNoGradClearing             Fault = "autograd-no-grad-clearing"
	FaultAutogradScopeFreesGraph            Fault = "autograd-scope-frees-graph"
	FaultAutogradBackwardKeepsIntermediates Fault = "autograd-backward-keeps-intermediates"
	FaultAutogradDetachKeepsGraph           Fault = "autograd-detach-keeps-graph"
	FaultAutogradSavedNeverReleased         Fault = "autograd-saved-never-released"
	FaultAutogradViewOwnVersion             Fault = "autograd-view-own-version"
	FaultAutogradDoubleBump                 Fault = "autograd-double-bump"
	FaultAutogradSnapshotTableNeverCleared  Fault = "autograd-snapshot-table-never-cleared"
	FaultAutogradRestoreWrongVersion        Fault = "autograd-restore-wrong-version"

	// A codegen fault added after the autograd ones: the order is stable.
	FaultSretSourceKept Fault = "sret-source-kept"

	FaultAutogradSnapshotShallow Fault = "autograd-snapshot-shallow"

	// A codegen fault: the lowering's liveness analysis (issue 17).
	FaultLoopLifeEndsFirstLoop Fault = "loop-life-ends-first-loop"
)

// The engines that hunt faults (FaultInfo.Engine).
const (
	// EngineProgram: generated flat programs run on Runtime, the model as
	// oracle (properties, fuzz, tlcheck selftest). The default.
	EngineProgram = "program"
	// EngineRegistry: concurrent histories of impl/registry checked for
	// linearizability against a sequential model (impl/registry/lincheck).
	EngineRegistry = "registry"
	// EnginePool: the pool property of package properties, which drives
	// the allocators of package impl/gpu.
	EnginePool = "pool"
	// EngineSource: source programs of package impl/lang, lowered by the
	// seeds' codegen rules onto a Runtime that has the fault on, with the
	// interpreter and the model as oracles (properties, FuzzSource,
	// tlcheck selftest). The runtime's own calls are unchanged by these
	// faults, so only source programs can show them.
	EngineSource = "source"
	// EngineAutograd: autograd programs of package impl/autograd, whose
	// Engine is built on a Runtime that has the fault on, with the model,
	// a shadow of the version counters and ClearGrads as oracles
	// (properties, FuzzAutogradProgram, tlcheck selftest). Like the
	// codegen faults, they leave the runtime's own calls unchanged.
	EngineAutograd = "autograd"
)

// engines names the engine of each fault that the program engines do not
// hunt; a fault missing here is EngineProgram's.
var engines = map[Fault]string{
	FaultRegistryCountOutsideLock: EngineRegistry,
	FaultRegistryAliasUnderflow:   EngineRegistry,
	FaultPoolDuplicateFreeEntry:   EnginePool,
	FaultPoolKeyNeverMatches:      EnginePool,
	FaultPoolSplitRemainderLost:   EnginePool,
	FaultPoolFreeNoMerge:          EnginePool,
	FaultPoolStatsDrift:           EnginePool,
	FaultReturnCleansInnermost:    EngineSource,
	FaultBreakInIfSkipsCleanup:    EngineSource,
	FaultBlockResultFreed:         EngineSource,
	FaultCallerNoRegister:         EngineSource,
	FaultCalleeReleasesBorrowed:   EngineSource,
	FaultRegisterTwice:            EngineSource,
	FaultMoveStillReleased:        EngineSource,
	FaultEmitRetainOverRetains:    EngineSource,

	FaultAutogradStructRetain:               EngineAutograd,
	FaultAutogradNoGradClearing:             EngineAutograd,
	FaultAutogradScopeFreesGraph:            EngineAutograd,
	FaultAutogradBackwardKeepsIntermediates: EngineAutograd,
	FaultAutogradDetachKeepsGraph:           EngineAutograd,
	FaultAutogradSavedNeverReleased:         EngineAutograd,
	FaultAutogradViewOwnVersion:             EngineAutograd,
	FaultAutogradDoubleBump:                 EngineAutograd,
	FaultAutogradSnapshotTableNeverCleared:  EngineAutograd,
	FaultAutogradRestoreWrongVersion:        EngineAutograd,

	FaultSretSourceKept: EngineSource,

	FaultAutogradSnapshotShallow: EngineAutograd,

	FaultLoopLifeEndsFirstLoop: EngineSource,
}

// alsoCaughtBy names, for a fault that more than its own engine shows,
// the other engines that catch it too: source programs keep their tensor
// variables in arena slots planned by PlanFrame, so the planner's and the
// arena's faults show in them as in flat programs.
var alsoCaughtBy = map[Fault][]string{
	FaultArenaGrowFreesOld:        {EngineSource},
	FaultPlannerSharesOverlapping: {EngineSource},
}

// FaultInfo documents one fault of the catalog.
type FaultInfo struct {
	Name    Fault
	Summary string // one line: what goes wrong
	Bug     string // the historic bug it reproduces
	Trigger string // the shortest call sequence (for a codegen fault, source program; for an autograd fault, engine calls) that shows it
	Engine  string // which engine hunts it: EngineProgram, EngineRegistry, EnginePool, EngineSource or EngineAutograd
}

// faultEntry is a row of the catalog's table; Catalog adds the engine.
type faultEntry struct {
	Name                  Fault
	Summary, Bug, Trigger string
}

func (e faultEntry) info() FaultInfo {
	engine, ok := engines[e.Name]
	if !ok {
		engine = EngineProgram
	}
	return FaultInfo{e.Name, e.Summary, e.Bug, e.Trigger, engine}
}

// catalog is the table behind Catalog. A fault's index is its bit in a
// faultSet; the order is what Catalog promises to keep stable.
var catalog = [...]faultEntry{
	{FaultStaleRecordNotPurged,
		"scope records name objects by address alone and are not purged on reuse: a dead object's record releases the new object at its address",
		"The TensorLogic memory manager kept each scope's records as bare pointers. Once a tensor died and malloc gave its address to a new tensor, the old record was still in the scope, and scope exit released the new tensor through it: a free of a value still in use. The fix in tl_runtime's memory_manager.rs removes a stale record when a pointer that has a record but no live count is registered again.",
		"ScopeEnter; a=Alloc(64); Release(a) [free a]; b=Alloc(64) [same address]; ParamRegister(w,b); ScopeExit [b freed though w holds it]"},
	{FaultScopeExitReleasesDead,
		"scope exit acts on a record whose object is already dead, freeing it a second time",
		"An early exit_scope in tl_runtime freed each struct record with a plain free(), without asking whether the struct was still alive; a struct already freed through another path was freed again (the \"malloc: Incorrect checksum\" crashes of docs/MEMORY_MANAGER.md). Later versions release through the reference-count table, which skips pointers it no longer tracks.",
		"ScopeEnter; a=Alloc(64); Release(a) [free a]; ScopeExit [free a again]"},
	{FaultUnregisterReleases,
		"unregister also drops the count: a value being moved or returned is freed on the way",
		"tl_mem_unregister once released the reference as well as the scope record; a returned value with count 1 was freed while being handed to the caller. memory_manager.rs keeps the fix as a comment on unregister: do not release, the count moves to the new owner.",
		"ScopeEnter; a=Alloc(64); Unregister(a) [free a, still owned by the caller]"},
	{FaultUnregisterOldestRecord,
		"unregister removes the object's oldest record instead of its newest, so the inner scope still releases the value being moved out of it",
		"tl_runtime's unregister searches the scopes from the top and takes the newest matching record (rposition) to handle duplicates and reuse; taking the first match instead removes a record from an outer scope and leaves the inner one to release the returned value.",
		"ScopeEnter; a=Alloc(64); ScopeEnter; Register(a); Unregister(a); ScopeExit [free a, still recorded in the outer scope]"},
	{FaultStructUnregisterDeep,
		"unregistering a returned struct also unregisters its fields, so their local references are never dropped",
		"TensorLogic's strategy (\"Shallow Unregister\", MEMORY_MANAGEMENT_STRATEGY.md) returns a struct by unregistering the container only; its fields keep their counts and the locals' references drop at scope exit. A recursive unregister keeps those references alive for ever: counts accumulate (the SRET accumulation of V5.1) and the fields leak.",
		"ScopeEnter; t=Alloc(16); s=StructInit(16,[t]); Unregister(s); ScopeExit [t keeps count 2]; ScopeEnter; Register(s); ScopeExit [s freed, t not]"},
	{FaultStructUnregisterNone,
		"unregistering a struct does nothing, so scope exit frees the struct being returned",
		"The TensorLogic debugging notes (.agent/workflows) record use-after-free crashes where an if or block expression returned a temporary that exit_scope freed because the value had not been unregistered first; a struct return path that skips the unregister is that bug.",
		"ScopeEnter; s=StructInit(16,[]); Unregister(s); ScopeExit [free s, being returned]"},
	{FaultStructInitNoAcquire,
		"struct_init stores its fields without acquiring them",
		"TensorLogic's strategy acquires each field at struct initialisation (emit_deep_clone), so that the local and the struct each own a reference; without it the field is owned once but referenced twice, and the local's release frees a tensor the struct still points to.",
		"ScopeEnter; t=Alloc(16); s=StructInit(16,[t]); Release(t) [free t, still a field of s]"},
	{FaultStructDeathNoFieldRelease,
		"a dying struct is freed without releasing its fields, which leak",
		"An early tl_runtime exit_scope treated structs as plain mallocs (\"just free\"), releasing none of the tensors their fields held; every struct that died leaked its fields.",
		"ScopeEnter; t=Alloc(16); s=StructInit(16,[t]); ScopeExit [s freed, t left with count 1]"},
	{FaultStructDeathFieldsOnly,
		"a dying struct releases its fields but its own block is never freed",
		"TensorLogic's persistent GPU pool (V4.0) dropped a tensor's contents on release but deliberately kept the OpaqueTensor header allocated; the same split, contents freed and container kept, is a leak of the container when it is not deliberate.",
		"ScopeEnter; s=StructInit(16,[]); Release(s) [count 0, s never freed]"},
	{FaultRegisterDuplicatesRecord,
		"register pushes two records for one handover, so scope exit releases the value twice",
		"docs/MEMORY_MANAGER.md warns of double registration: make_tensor already registers a new tensor, and generated code that registers it again leaves two records, so scope exit releases it twice and frees a value that is still referenced.",
		"ScopeEnter; a=Alloc(64); ParamRegister(w,a); Unregister(a); Register(a); ScopeExit [free a though w holds it]"},
	{FaultRegisterCountsNoRecord,
		"register of an object that already has a record acquires it instead of adding a record",
		"An earlier register_tensor in tl_runtime pushed a record only for pointers it had not seen; for a known pointer it incremented the count instead. No record drops that count, so the object outlives every scope and leaks. Later versions always push a record.",
		"ScopeEnter; a=Alloc(64); Register(a); ScopeExit [a not freed: count 1, no record]"},
	{FaultParamRegisterNoAcquire,
		"param_register holds the object without acquiring it, so scope exit frees a parameter",
		"TensorLogic's borrowing rule (V2.2) says a borrowed value stored anywhere that outlives the call must be promoted with an explicit tl_ptr_acquire; a parameter registry that stores without acquiring holds a reference it does not own, freed at the owner's scope exit.",
		"ScopeEnter; a=Alloc(64); ParamRegister(w,a); ScopeExit [free a though w holds it]"},
	{FaultParamReregisterNoRelease,
		"re-registering a parameter name does not release the object it held, which leaks",
		"Re-binding a name must drop the reference to the old value (TensorLogic's reassignment rule); when it does not, every training step leaves the previous weights alive, the linear memory growth per iteration TensorLogic chased in its autograd fix (V3.3).",
		"ScopeEnter; a=Alloc(64); b=Alloc(64); ParamRegister(w,a); Release(a); ParamRegister(w,b) [a not freed]"},
	{FaultParamReregisterReleaseFirst,
		"re-registering a name releases the old object before acquiring the new one: re-binding the same object frees it",
		"The self-assignment bug: drop the old value, then retain the new one. TensorLogic's strategy doc describes the in-place update s.b1 = s.b1.step(lr), where releasing the old pointer frees what the new value still shares.",
		"ScopeEnter; a=Alloc(64); ParamRegister(w,a); Release(a); ParamRegister(w,a) [free a, then use after free]"},
	{FaultReleaseIgnoresZero,
		"a release that brings the count to 0 does not free the object",
		"tl_runtime's tl_ptr_dec_ref only reports that a count reached 0 and leaves the free to its caller; a caller that ignores the answer leaks the object, and the persistent pool's release (V4.0) kept blocks allocated on purpose.",
		"ScopeEnter; a=Alloc(64); Release(a) [count 0, a never freed]"},
	{FaultZSTAllocates,
		"a zero-sized value is managed as an object at one dangling non-NULL address instead of being NULL",
		"TensorLogic's ZST strategy (V3.2) fixed compiled code that handed zero-sized structs to the runtime as values the runtime read as addresses (0x7 and the like) and passed to free(), crashing. The fix is ZST = NULL, with every runtime call returning at once on NULL.",
		"ScopeEnter; Alloc(0); Alloc(0) [both at the same address: an allocation over a live one]"},
	{FaultHeapDoubleHandout,
		"the heap queues a freed block twice and hands it out to two live objects",
		"tl_runtime's TensorPool could be given the same tensor pointer twice (a tensor released twice through address reuse or a counting bug) and would then hand it to two tensors; the fix checks the free list for a duplicate before pooling.",
		"ScopeEnter; a=Alloc(64); Release(a); b=Alloc(64); c=Alloc(64) [b and c at the same address]"},
	{FaultScopeExitOldestFirst,
		"scope exit releases its records oldest first, so a struct made after its field releases a field that its own record already freed",
		"TensorLogic's exit_scope frees a scope's allocations in reverse order (LIFO), as C++ runs destructors and Rust drops values: a value made later may hold one made earlier, never the other way round. Walking the records oldest first frees a tensor whose only remaining reference is a struct made after it, and the struct's death then releases a dead field: a double free reported, or done, on a correct program. tlcheck's own model and runtime read the scope this way until the contract was corrected.",
		"ScopeEnter; t=Alloc(16); s=StructInit(16,[t]); Release(t); ScopeExit [t freed by its record, then s releases a dead t]"},
	{FaultArenaGrowFreesOld,
		"a slot that grows gives its old buffer back at once, and the arena hands it to the next buffer while the contract keeps it alive until fn_exit",
		"TensorLogic's arena grew a slot by freeing the old buffer and allocating a bigger one; a variable that still pointed into the old buffer then read memory the arena had handed to another tensor. Commit 4c299a7 keeps every old buffer until the frame exits.",
		"FnEnter(2); ArenaGet(0,16); ArenaGet(0,32) [grows: the old buffer is given back]; ArenaGet(1,16) [handed the old buffer's address: overlaps it]"},
	{FaultPlannerSharesOverlapping,
		"the slot planner takes a lifetime's last statement as already over, so a variable shares its slot with the one defined by the statement that last reads it",
		"An off-by-one at an interval's end in the liveness planner: the expiry test compared last < first as last <= first, so in x1 = f(x0), where x0 is last used, x1 was given x0's slot and the statement overwrote its own operand. The frame is one slot too small, and a read of x0 then finds x1 in its slot.",
		"PlanFrame([{0,1},{1,1}]) = slots [0 0], size 1; FnEnter(1); ArenaGet(0,16,v0); ArenaGet(0,16,v1); Read(v0) [v0's slot holds v1]"},
	{FaultMethodWithoutFrame,
		"a method runs without a frame of its own: its arena_gets land in its caller's frame (or in none), and its fn_exit pops the caller's",
		"TensorLogic V2.1 compiled method bodies without the function-frame prologue, so a method that asked the arena for a buffer panicked with \"No function frame\" at top level, or, called from a function, took slots of the caller's frame; commit 3e006db gives methods a frame like functions.",
		"MethodEnter(1) [no fn_enter recorded]; ArenaGet(0,16) [No function frame]"},
	{FaultRegistryCountOutsideLock,
		"the registry updates a buffer's alias count after releasing the shard lock, so concurrent aliases and unregisters lose updates and the buffer is freed early or twice",
		"SCL-Core's pointer registry (seed 003) kept a buffer's count as an atomic it read and wrote back (load, then store) after the shard's lock was released, to keep the critical section short. Two threads aliasing one buffer at once both read the same count and one increment is lost; the buffer is then freed while an alias still names it, or a lost decrement leaves it for ever. Each access is atomic, so a race detector is silent; only a check of whole concurrent histories sees it.",
		"RegisterBuffer(b,64); in parallel Alias(b,a1) || Alias(b,a2) [both read count 1, both write 2]; Unregister(b); Unregister(a1) [count 0: b freed, though a2 still names it]"},
	{FaultRegistryAliasUnderflow,
		"unregistering an alias decrements the buffer's count but leaves the alias registered, so unregistering it again frees the buffer under its real pointer and takes the count below zero",
		"SCL-Core's unregister_ptr decremented a buffer's alias count without removing the alias's entry or checking that the count was still positive; a runtime that unregistered a view twice (once on drop, once on scope exit) freed the buffer while its owner still held it, and the count went negative, so the owner's own unregister never freed anything.",
		"RegisterBuffer(b,64); Alias(b,a); Unregister(a); Unregister(a) [count 0: b freed, still registered]; Unregister(b) [count -1]"},
	{FaultPoolDuplicateFreeEntry,
		"the persistent pool has no duplicate-pointer guard: a pointer put back twice is queued twice and handed to two tensors",
		"TensorLogic's GPU pool (crates/tl_runtime/src/tensor_pool.rs) can be handed the same pointer twice by a release path that runs twice; without a guard it queues the pointer twice and gives it to two live tensors, which overwrite each other. Its release now checks the free list first (list.contains(&ptr): already pooled, return), the duplicate-pointer guard that issue 10 attributes to commits ab9a391 and 07bf4ab.",
		"p=Persistent; a=Acquire(256,f32); Release(a); Release(a) [queued twice]; b=Acquire(256,f32); c=Acquire(256,f32) [b and c at one address: pool_get over a live pool block]"},
	{FaultPoolKeyNeverMatches,
		"the persistent pool's lookup key never equals the key a tensor was stored under, so nothing is ever reused",
		"A pool whose release files a tensor under a key that its acquire never rebuilds misses on every acquire and allocates afresh while released tensors pile up unused: a 0% hit rate and a pool that only grows, the shape of the fix issue 10 attributes to TensorLogic commit 51ac503. TensorLogic's pool keys both sides by (num_elements, dtype_id, device_id) alone.",
		"p=Persistent; a=Acquire(256,f32); Release(a); b=Acquire(256,f32) [a miss: a new dev_malloc though a's block is free under the same key]"},
	{FaultPoolSplitRemainderLost,
		"the caching allocator splits a block and drops the remainder: reserved memory that no block covers and no request can use",
		"In PyTorch's alloc_found_block the remainder of a split goes back into the pool (pool.insert_into_blocks(remaining)) and stays linked to its neighbours; an allocator that forgets it leaks the rest of the segment for ever, and the segment can never be freed whole, so empty_cache cannot return it: the reserved-but-unusable memory users report as fragmentation.",
		"c=Caching; a=Malloc(512) [splits a 2 MiB segment]; Free(a); EmptyCache [the segment is not whole: it stays reserved]"},
	{FaultPoolFreeNoMerge,
		"the caching allocator does not merge a freed block with its free neighbours: a free segment stays in pieces, cannot be released, and a later large request fails with a false out-of-memory",
		"PyTorch's free_block merges a freed block with its previous and next blocks (try_merge_blocks) when they are free and wait for no event; without it a segment freed piece by piece stays split, release_cached_blocks frees only whole segments, and a request that the device could serve fails with CUDA out of memory (the fragmentation PyTorch users report).",
		"c=Caching (capacity 20 MiB); a=Malloc(2 MiB); b=Malloc(2 MiB); Free(a); Free(b) [two free neighbours]; Malloc(20 MiB) [out of memory though nothing is allocated]"},
	{FaultPoolStatsDrift,
		"the caching allocator's free takes the requested size, not the block's rounded size, off allocated_bytes, so memory_stats() drifts from the blocks",
		"PyTorch's free() decreases allocated_bytes by block->size, the rounded size that malloc added; requested_bytes is the counter of the user's sizes. Mixing the two makes allocated_bytes grow with every rounded request, the kind of drift that turns memory_stats() and the OOM message into fiction.",
		"c=Caching; a=Malloc(1000) [allocated_bytes 1024]; Free(a) [allocated_bytes.current 24, not 0]"},
	{FaultReturnCleansInnermost,
		"an early return exits only the innermost scope: the scopes around it stay open, their values alive",
		"TensorLogic's codegen emitted, for a return inside a nested block, the cleanup of the innermost scope only; the enclosing scopes of the function were neither exited nor released, so their tensors leaked and the runtime's scope stack was left deeper than the caller expected. Commit 6a69c03 makes return walk every scope of the function, innermost first.",
		"fn f() -> Tensor { let a = zeros(16); { let b = zeros(16); return b; } } [a leaks; f's body scope stays open]"},
	{FaultBreakInIfSkipsCleanup,
		"a break or continue inside an if (nested in the loop body) jumps out without exiting the scopes it leaves",
		"The loop lowering emitted the loop body's cleanup before a break that sat directly in the body, but a break inside a nested if branched straight to the loop's exit block: the if's scope and the body's scope were never exited. Commit 33b947f emits the cleanup of every scope between the break and the loop.",
		"for i in 0..2 { let a = zeros(16); if i == 0 { break; } } [a leaks; two scopes stay open]"},
	{FaultBlockResultFreed,
		"the value of an if or block expression is not unregistered before its block exits, so the exit frees it and the caller receives a dead value",
		"TensorLogic's if and block expressions returned a temporary made in the block; the block's exit_scope freed it before the enclosing let could register it, a use-after-free. Commits f404821 and 14aa0d1 unregister the block's result (as a return does) before the scope exits.",
		"let x = { let t = zeros(16); t }; [t freed at the block's end, then registered as x]"},
	{FaultCallerNoRegister,
		"the caller does not register the value a call returns, so no scope ever releases it",
		"The callee unregisters what it returns and the count travels to the caller, whose let must register it; before commit a934c11 the codegen skipped that register for call results, so every returned tensor outlived its variable's scope: a leak per call.",
		"fn f() -> Tensor { let t = zeros(16); return t; } fn main() { { let x = f(); } } [x's tensor outlives its block]"},
	{FaultCalleeReleasesBorrowed,
		"the callee releases its parameters at its exit, though they are borrowed: the caller's values are freed under it",
		"TensorLogic's borrowing rule makes parameters borrowed (no acquire, no release); the function epilogue released them anyway, as if they were owned locals, and the caller's tensor died while the caller still held it. Commits 6103f3d and 25cbbe3 stop the callee from releasing its arguments.",
		"fn f(a: &Tensor) -> Tensor { let t = zeros(16); return t; } fn main() { let a = zeros(16); let b = f(&a); } [a freed at f's exit, freed again at main's]"},
	{FaultRegisterTwice,
		"the caller registers a returned value twice, so its scope releases it twice",
		"Generated code registered a call's result, and the let that received it registered the same pointer again: two records for one count, and the second release at scope exit freed memory already freed (or another tensor at the same address). Commit 1371d0e registers a pointer once.",
		"fn f() -> Tensor { let t = zeros(16); return t; } fn main() { let x = f(); } [x's tensor released twice at main's end]"},
	{FaultMoveStillReleased,
		"a move at a variable's last use leaves the moved-from variable's record, so its scope releases the value the new owner holds",
		"A move transfers a count without an acquire; the compiler must also drop the source's cleanup (TensorLogic's move at last use unregisters the source). Leaving the source's record in its scope releases the value once for each owner: a double free at scope exit.",
		"let x = { let a = zeros(16); let b = a; b }; [a's record, left behind, frees the value x receives at the block's end]"},
	{FaultEmitRetainOverRetains,
		"a struct literal retains its tensor fields again after struct_init already acquired them: each struct keeps its fields one count too many, and memory grows each iteration",
		"TensorLogic's struct initialisation deep-clones (acquires) each field; emit_retain, written for struct values, was also emitted for tensor fields, so each field got a second count that nothing released. In a training loop the tensors of every iteration stayed alive: the memory growth per iteration that commit 4419a90 removed.",
		"for i in 0..2 { let t = zeros(16); let s = S { f0: t }; } [t survives each iteration]"},
	{FaultAutogradStructRetain,
		"every graph tensor is retained struct-style, a reference that no one releases, so each iteration keeps its whole graph",
		"TensorLogic 4419a90: tensors stored in the autograd graph were acquired with the struct-field retain, whose matching release never ran; memory grew from 1237 MB to 2168 MB over one training run.",
		"x=Leaf(req); y=x.Mul(x); y.Sum().Backward(false); ScopeExit; End [y's buffer leaks]"},
	{FaultAutogradNoGradClearing,
		"ClearGrads does nothing, so gradients accumulate across loop iterations",
		"TensorLogic before V3.3 had no clear_grads at the end of a loop iteration: each step's gradient was added to the last, and training diverged.",
		"loop 2x { loss=f(w); loss.Backward(false); ClearGrads } [w.grad is twice the gradient]"},
	{FaultAutogradScopeFreesGraph,
		"a graph tensor keeps its scope record, so scope exit frees a tensor the graph still needs",
		"TensorLogic V5.0's hybrid cleanup fixed the use-after-free of scope exit freeing intermediates the autograd graph held: a graph tensor's scope release became a no-op.",
		"ScopeEnter; x=Leaf(req); ScopeEnter; y=x.Add(x); ScopeExit [y freed]; y.Sum() [reads freed bytes]"},
	{FaultAutogradBackwardKeepsIntermediates,
		"backward does not free the graph's non-leaf intermediates",
		"TensorLogic V5.0: backward is where the graph engine frees the intermediates it owns; without it they outlive the step.",
		"x=Leaf(req); y=x.Exp(); y.Sum().Backward(false); End [y leaks]"},
	{FaultAutogradDetachKeepsGraph,
		"detach leaves the upstream graph alive",
		"TensorLogic V5.0: detach frees the graph upstream of the detached tensor; a detach that does not leaves it owned by no one.",
		"x=Leaf(req); y=x.Exp(); y.Detach(); End [y and its saved output leak]"},
	{FaultAutogradSavedNeverReleased,
		"a node's saved tensors are not released after it runs",
		"PyTorch releases saved variables after a node runs unless retain_graph; a runtime that keeps them holds every activation of every step.",
		"x=Leaf(req); y=x.Exp(); y.Sum().Backward(false); End [the saved output's reference leaks]"},
	{FaultAutogradViewOwnVersion,
		"a view gets a version counter of its own instead of sharing its base's",
		"cgadimpl kept a version per tensor object, not per storage: an in-place op through a view did not bump the base's version, so backward used a modified saved tensor and returned a wrong gradient.",
		"x=Leaf([2]); v=x.Slice(0,1); v.MulInPlace(c) [x's version stays 0]; with y=w.Mul(x) before it, y.Sum().Backward runs"},
	{FaultAutogradDoubleBump,
		"one in-place op bumps the version counter twice",
		"cgadimpl bumped the version both in the in-place kernel and in its autograd wrapper; versions drifted from PyTorch's, and checkpoints keyed by version restored the wrong snapshot.",
		"x=Leaf([1]); x.AddInPlace(x,1) [version 2, want 1]"},
	{FaultAutogradSnapshotTableNeverCleared,
		"checkpoint snapshots are kept in a global table that releasing the graph never clears",
		"cgadimpl kept its checkpoint snapshots in global tables keyed by tensor that grew from one training run to the next: the snapshot bytes of every step stayed alive after its graph was gone.",
		"Config{Checkpoint}; y=w.Mul(x); x.AddInPlace(c,1) [snapshot of x]; y.Sum().Backward(false); End [the snapshot leaks]"},
	{FaultAutogradRestoreWrongVersion,
		"the snapshot filed for a saved tensor's version is taken after the in-place op wrote and bumped the storage, so backward restores a snapshot of the next version",
		"cgadimpl's checkpoint hook ran after the in-place kernel, whose version bump had already happened: the snapshot it kept for the saved version held the next one, and backward restored values of another version than the one saved, a wrong gradient with no error.",
		"Config{Checkpoint}; y=w.Mul(x) [saves x@0]; x.AddInPlace(c,1) [bump, then a snapshot of x@1 filed as x@0]; y.Sum().Backward(false) [restores x@1]"},
	{FaultSretSourceKept,
		"a struct returned by destination passing is copied into the caller's destination, its fields acquired, but its source is kept as if moved: never released, it outlives the call and its fields keep a count too many",
		"TensorLogic returns a struct by destination passing (SRET): the caller reserves the destination, and the callee's return copies the struct into it (emit_struct_copy, which acquires each field). Its memory strategy (docs/dev/MEMORY_MANAGEMENT_STRATEGY.md, V5.1) records the bug: the source variable was marked CLEANUP_NONE, as if moved, so exit_scope never dropped its references and every struct return left its fields' counts one too high; main's final cleanup then met the accumulated counts and crashed (SIGBUS). It was worked around, not fixed, by ending main with exit(0).",
		"fn f() -> Box { let t = zeros(16); let b = Box { f0: t }; return b; } fn main() { let x = f(); } [b outlives f, and t keeps b's count]"},
	{FaultAutogradSnapshotShallow,
		"a checkpoint's snapshot is the saved tensor's storage itself, held by one more reference, not a copy: the in-place op it was taken for overwrites it, and backward restores the modified values",
		"A bug of the shape of cgadimpl's checkpoints (seed 004), not one commit: a snapshot that aliases its storage (a shallow copy, which tensor handles sharing one buffer make easy) records the right version but holds whatever the storage holds later, so the restore gives a wrong gradient with no error.",
		"Config{Checkpoint}; y=w.Mul(x) [saves x@0]; x.AddInPlace(c,1) [x's snapshot is x's own buffer, which the op then writes]; y.Sum().Backward(false) [restores x@1's values as x@0]"},
	{FaultLoopLifeEndsFirstLoop,
		"a variable declared outside two loops and used in both is kept live only to the end of the first: the slot plan hands its slot to a variable the second loop defines, and the second loop's next turn reads the variable through a slot that holds another's data",
		"This project's own lowering had it until issue 17, and the README's first 'tlcheck fuzz --source' found it on the correct path: the liveness analysis extended a variable's lifetime to the end of the first loop around a use and never looked at a later one. A liveness-based slot planner must treat every loop around a use as a use at the loop's last statement (a loop-carried use), as TensorLogic's compiler keeps a tensor variable in its frame across the turns of any loop that reads it.",
		"fn main() { let a = zeros(32); for i in 0..1 { let b = a; } for i in 0..2 { let c = add(a); let d = zeros(32); } } [d takes a's slot; the second turn reads a through it]"},
}

// Catalog lists every fault, in a stable order.
func Catalog() []FaultInfo {
	out := make([]FaultInfo, len(catalog))
	for i, e := range catalog {
		out[i] = e.info()
	}
	return out
}

// Also lists the engines other than its own that catch the fault too
// (none for most); their proofs of power include it.
func (f FaultInfo) Also() []string { return slices.Clone(alsoCaughtBy[f.Name]) }

// CaughtBy reports whether engine catches the fault: its own, or one of
// Also.
func (f FaultInfo) CaughtBy(engine string) bool {
	return f.Engine == engine || slices.Contains(alsoCaughtBy[f.Name], engine)
}

// LookupFault returns the catalog entry of the fault named name. Use it to
// check a name a user typed before putting it in a Config.
func LookupFault(name string) (FaultInfo, bool) {
	for _, f := range catalog {
		if string(f.Name) == name {
			return f.info(), true
		}
	}
	return FaultInfo{}, false
}

// faultSet holds the faults switched on, one bit per catalog entry, so
// that asking whether a fault is on costs one AND on the hot path.
type faultSet uint64

// The faults' bits, in catalog order (a test holds the two together).
const (
	fStaleRecordNotPurged faultSet = 1 << iota
	fScopeExitReleasesDead
	fUnregisterReleases
	fUnregisterOldestRecord
	fStructUnregisterDeep
	fStructUnregisterNone
	fStructInitNoAcquire
	fStructDeathNoFieldRelease
	fStructDeathFieldsOnly
	fRegisterDuplicatesRecord
	fRegisterCountsNoRecord
	fParamRegisterNoAcquire
	fParamReregisterNoRelease
	fParamReregisterReleaseFirst
	fReleaseIgnoresZero
	fZSTAllocates
	fHeapDoubleHandout
	fScopeExitOldestFirst
	fArenaGrowFreesOld
	fPlannerSharesOverlapping
	fMethodWithoutFrame
	fRegistryCountOutsideLock // not Runtime's: Config refuses it
	fRegistryAliasUnderflow
	fPoolDuplicateFreeEntry // not Runtime's: Config refuses it
	fPoolKeyNeverMatches
	fPoolSplitRemainderLost
	fPoolFreeNoMerge
	fPoolStatsDrift
	fReturnCleansInnermost // codegen: the lowering asks HasFault
	fBreakInIfSkipsCleanup
	fBlockResultFreed
	fCallerNoRegister
	fCalleeReleasesBorrowed
	fRegisterTwice
	fMoveStillReleased
	fEmitRetainOverRetains
	fAutogradStructRetain // autograd: impl/autograd asks HasFault
	fAutogradNoGradClearing
	fAutogradScopeFreesGraph
	fAutogradBackwardKeepsIntermediates
	fAutogradDetachKeepsGraph
	fAutogradSavedNeverReleased
	fAutogradViewOwnVersion
	fAutogradDoubleBump
	fAutogradSnapshotTableNeverCleared
	fAutogradRestoreWrongVersion
	fSretSourceKept
	fAutogradSnapshotShallow
	fLoopLifeEndsFirstLoop
)

// HasFault reports whether fault f is on. The lowering of source
// programs (package impl/lang) asks it for the codegen faults, which
// change what a compiler emits rather than what the runtime does, and
// the autograd engine (package impl/autograd) for the autograd faults.
func (r *Runtime) HasFault(f Fault) bool {
	if r.faults == 0 {
		return false // the correct runtime, asked on every hot path of the engines above it
	}
	return r.faults.has(faultBits[f])
}

// faultBits is each catalogued fault's bit in a faultSet (its index in
// catalog), for HasFault; a name the catalog lacks has none.
var faultBits = func() map[Fault]faultSet {
	m := make(map[Fault]faultSet, len(catalog))
	for i, c := range catalog {
		m[c.Name] = 1 << i
	}
	return m
}()

func (s faultSet) has(bit faultSet) bool { return s&bit != 0 }

// parseFaults turns a Config's fault list into a set, naming the first
// fault the catalog lacks.
func parseFaults(fs []Fault) (faultSet, error) {
	var s faultSet
next:
	for _, f := range fs {
		for i, c := range catalog {
			if c.Name == f {
				if e := c.info().Engine; !runtimeCarries(e) {
					return 0, fmt.Errorf("fault %s belongs to the %s engine: Runtime has no %s to break", f, e, e)
				}
				s |= 1 << i
				continue next
			}
		}
		var names []string
		for _, c := range catalog {
			if runtimeCarries(c.info().Engine) {
				names = append(names, string(c.Name))
			}
		}
		return 0, fmt.Errorf("unknown fault %q (the catalog has %s)", f, strings.Join(names, ", "))
	}
	return s, nil
}

// runtimeCarries reports whether a Runtime can have the faults of engine
// on: its own, and those of the code built on it (the lowering of source
// programs, the autograd engine), which ask HasFault.
func runtimeCarries(engine string) bool {
	switch engine {
	case EngineProgram, EngineSource, EngineAutograd:
		return true
	}
	return false
}
