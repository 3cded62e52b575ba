package impl

// The runtime's own faults: bugs of Runtime's calls, each shown by a
// flat program (EngineProgram). Their rows are the catalog's first; a new
// one goes at the end.
var (
	FaultStaleRecordNotPurged = DeclareFault(FaultInfo{Name: "stale-record-not-purged", Engine: EngineProgram,
		Summary: "scope records name objects by address alone and are not purged on reuse: a dead object's record releases the new object at its address",
		Bug:     "The TensorLogic memory manager kept each scope's records as bare pointers. Once a tensor died and malloc gave its address to a new tensor, the old record was still in the scope, and scope exit released the new tensor through it: a free of a value still in use. The fix in tl_runtime's memory_manager.rs removes a stale record when a pointer that has a record but no live count is registered again.",
		Trigger: "ScopeEnter; a=Alloc(64); Release(a) [free a]; b=Alloc(64) [same address]; ParamRegister(w,b); ScopeExit [b freed though w holds it]"})
	FaultScopeExitReleasesDead = DeclareFault(FaultInfo{Name: "scope-exit-releases-dead", Engine: EngineProgram,
		Summary: "scope exit acts on a record whose object is already dead, freeing it a second time",
		Bug:     "An early exit_scope in tl_runtime freed each struct record with a plain free(), without asking whether the struct was still alive; a struct already freed through another path was freed again (the \"malloc: Incorrect checksum\" crashes of docs/MEMORY_MANAGER.md). Later versions release through the reference-count table, which skips pointers it no longer tracks.",
		Trigger: "ScopeEnter; a=Alloc(64); Release(a) [free a]; ScopeExit [free a again]"})
	FaultUnregisterReleases = DeclareFault(FaultInfo{Name: "unregister-releases", Engine: EngineProgram,
		Summary: "unregister also drops the count: a value being moved or returned is freed on the way",
		Bug:     "tl_mem_unregister once released the reference as well as the scope record; a returned value with count 1 was freed while being handed to the caller. memory_manager.rs keeps the fix as a comment on unregister: do not release, the count moves to the new owner.",
		Trigger: "ScopeEnter; a=Alloc(64); Unregister(a) [free a, still owned by the caller]"})
	FaultUnregisterOldestRecord = DeclareFault(FaultInfo{Name: "unregister-oldest-record", Engine: EngineProgram,
		Summary: "unregister removes the object's oldest record instead of its newest, so the inner scope still releases the value being moved out of it",
		Bug:     "tl_runtime's unregister searches the scopes from the top and takes the newest matching record (rposition) to handle duplicates and reuse; taking the first match instead removes a record from an outer scope and leaves the inner one to release the returned value.",
		Trigger: "ScopeEnter; a=Alloc(64); ScopeEnter; Register(a); Unregister(a); ScopeExit [free a, still recorded in the outer scope]"})
	FaultStructUnregisterDeep = DeclareFault(FaultInfo{Name: "struct-unregister-deep", Engine: EngineProgram,
		Summary: "unregistering a returned struct also unregisters its fields, so their local references are never dropped",
		Bug:     "TensorLogic's strategy (\"Shallow Unregister\", MEMORY_MANAGEMENT_STRATEGY.md) returns a struct by unregistering the container only; its fields keep their counts and the locals' references drop at scope exit. A recursive unregister keeps those references alive for ever: counts accumulate (the SRET accumulation of V5.1) and the fields leak.",
		Trigger: "ScopeEnter; t=Alloc(16); s=StructInit(16,[t]); Unregister(s); ScopeExit [t keeps count 2]; ScopeEnter; Register(s); ScopeExit [s freed, t not]"})
	FaultStructUnregisterNone = DeclareFault(FaultInfo{Name: "struct-unregister-none", Engine: EngineProgram,
		Summary: "unregistering a struct does nothing, so scope exit frees the struct being returned",
		Bug:     "The TensorLogic debugging notes (.agent/workflows) record use-after-free crashes where an if or block expression returned a temporary that exit_scope freed because the value had not been unregistered first; a struct return path that skips the unregister is that bug.",
		Trigger: "ScopeEnter; s=StructInit(16,[]); Unregister(s); ScopeExit [free s, being returned]"})
	FaultStructInitNoAcquire = DeclareFault(FaultInfo{Name: "struct-init-no-acquire", Engine: EngineProgram,
		Summary: "struct_init stores its fields without acquiring them",
		Bug:     "TensorLogic's strategy acquires each field at struct initialisation (emit_deep_clone), so that the local and the struct each own a reference; without it the field is owned once but referenced twice, and the local's release frees a tensor the struct still points to.",
		Trigger: "ScopeEnter; t=Alloc(16); s=StructInit(16,[t]); Release(t) [free t, still a field of s]"})
	FaultStructDeathNoFieldRelease = DeclareFault(FaultInfo{Name: "struct-death-no-field-release", Engine: EngineProgram,
		Summary: "a dying struct is freed without releasing its fields, which leak",
		Bug:     "An early tl_runtime exit_scope treated structs as plain mallocs (\"just free\"), releasing none of the tensors their fields held; every struct that died leaked its fields.",
		Trigger: "ScopeEnter; t=Alloc(16); s=StructInit(16,[t]); ScopeExit [s freed, t left with count 1]"})
	FaultStructDeathFieldsOnly = DeclareFault(FaultInfo{Name: "struct-death-fields-only", Engine: EngineProgram,
		Summary: "a dying struct releases its fields but its own block is never freed",
		Bug:     "TensorLogic's persistent GPU pool (V4.0) dropped a tensor's contents on release but deliberately kept the OpaqueTensor header allocated; the same split, contents freed and container kept, is a leak of the container when it is not deliberate.",
		Trigger: "ScopeEnter; s=StructInit(16,[]); Release(s) [count 0, s never freed]"})
	FaultRegisterDuplicatesRecord = DeclareFault(FaultInfo{Name: "register-duplicates-record", Engine: EngineProgram,
		Summary: "register pushes two records for one handover, so scope exit releases the value twice",
		Bug:     "docs/MEMORY_MANAGER.md warns of double registration: make_tensor already registers a new tensor, and generated code that registers it again leaves two records, so scope exit releases it twice and frees a value that is still referenced.",
		Trigger: "ScopeEnter; a=Alloc(64); ParamRegister(w,a); Unregister(a); Register(a); ScopeExit [free a though w holds it]"})
	FaultRegisterCountsNoRecord = DeclareFault(FaultInfo{Name: "register-counts-without-record", Engine: EngineProgram,
		Summary: "register of an object that already has a record acquires it instead of adding a record",
		Bug:     "An earlier register_tensor in tl_runtime pushed a record only for pointers it had not seen; for a known pointer it incremented the count instead. No record drops that count, so the object outlives every scope and leaks. Later versions always push a record.",
		Trigger: "ScopeEnter; a=Alloc(64); Register(a); ScopeExit [a not freed: count 1, no record]"})
	FaultParamRegisterNoAcquire = DeclareFault(FaultInfo{Name: "param-register-no-acquire", Engine: EngineProgram,
		Summary: "param_register holds the object without acquiring it, so scope exit frees a parameter",
		Bug:     "TensorLogic's borrowing rule (V2.2) says a borrowed value stored anywhere that outlives the call must be promoted with an explicit tl_ptr_acquire; a parameter registry that stores without acquiring holds a reference it does not own, freed at the owner's scope exit.",
		Trigger: "ScopeEnter; a=Alloc(64); ParamRegister(w,a); ScopeExit [free a though w holds it]"})
	FaultParamReregisterNoRelease = DeclareFault(FaultInfo{Name: "param-reregister-no-release-old", Engine: EngineProgram,
		Summary: "re-registering a parameter name does not release the object it held, which leaks",
		Bug:     "Re-binding a name must drop the reference to the old value (TensorLogic's reassignment rule); when it does not, every training step leaves the previous weights alive, the linear memory growth per iteration TensorLogic chased in its autograd fix (V3.3).",
		Trigger: "ScopeEnter; a=Alloc(64); b=Alloc(64); ParamRegister(w,a); Release(a); ParamRegister(w,b) [a not freed]"})
	FaultParamReregisterReleaseFirst = DeclareFault(FaultInfo{Name: "param-reregister-release-first", Engine: EngineProgram,
		Summary: "re-registering a name releases the old object before acquiring the new one: re-binding the same object frees it",
		Bug:     "The self-assignment bug: drop the old value, then retain the new one. TensorLogic's strategy doc describes the in-place update s.b1 = s.b1.step(lr), where releasing the old pointer frees what the new value still shares.",
		Trigger: "ScopeEnter; a=Alloc(64); ParamRegister(w,a); Release(a); ParamRegister(w,a) [free a, then use after free]"})
	FaultReleaseIgnoresZero = DeclareFault(FaultInfo{Name: "release-ignores-zero", Engine: EngineProgram,
		Summary: "a release that brings the count to 0 does not free the object",
		Bug:     "tl_runtime's tl_ptr_dec_ref only reports that a count reached 0 and leaves the free to its caller; a caller that ignores the answer leaks the object, and the persistent pool's release (V4.0) kept blocks allocated on purpose.",
		Trigger: "ScopeEnter; a=Alloc(64); Release(a) [count 0, a never freed]"})
	FaultZSTAllocates = DeclareFault(FaultInfo{Name: "zst-allocates", Engine: EngineProgram,
		Summary: "a zero-sized value is managed as an object at one dangling non-NULL address instead of being NULL",
		Bug:     "TensorLogic's ZST strategy (V3.2) fixed compiled code that handed zero-sized structs to the runtime as values the runtime read as addresses (0x7 and the like) and passed to free(), crashing. The fix is ZST = NULL, with every runtime call returning at once on NULL.",
		Trigger: "ScopeEnter; Alloc(0); Alloc(0) [both at the same address: an allocation over a live one]"})
	FaultHeapDoubleHandout = DeclareFault(FaultInfo{Name: "heap-double-handout", Engine: EngineProgram,
		Summary: "the heap queues a freed block twice and hands it out to two live objects",
		Bug:     "tl_runtime's TensorPool could be given the same tensor pointer twice (a tensor released twice through address reuse or a counting bug) and would then hand it to two tensors; the fix checks the free list for a duplicate before pooling.",
		Trigger: "ScopeEnter; a=Alloc(64); Release(a); b=Alloc(64); c=Alloc(64) [b and c at the same address]"})
	FaultScopeExitOldestFirst = DeclareFault(FaultInfo{Name: "scope-exit-oldest-first", Engine: EngineProgram,
		Summary: "scope exit releases its records oldest first, so a struct made after its field releases a field that its own record already freed",
		Bug:     "TensorLogic's exit_scope frees a scope's allocations in reverse order (LIFO), as C++ runs destructors and Rust drops values: a value made later may hold one made earlier, never the other way round. Walking the records oldest first frees a tensor whose only remaining reference is a struct made after it, and the struct's death then releases a dead field: a double free reported, or done, on a correct program. tlcheck's own model and runtime read the scope this way until the contract was corrected.",
		Trigger: "ScopeEnter; t=Alloc(16); s=StructInit(16,[t]); Release(t); ScopeExit [t freed by its record, then s releases a dead t]"})
	FaultArenaGrowFreesOld = DeclareFault(FaultInfo{Name: "arena-grow-frees-old", Engine: EngineProgram,
		Also:    []string{EngineSource},
		Summary: "a slot that grows gives its old buffer back at once, and the arena hands it to the next buffer while the contract keeps it alive until fn_exit",
		Bug:     "TensorLogic's arena grew a slot by freeing the old buffer and allocating a bigger one; a variable that still pointed into the old buffer then read memory the arena had handed to another tensor. Commit 4c299a7 keeps every old buffer until the frame exits.",
		Trigger: "FnEnter(2); ArenaGet(0,16); ArenaGet(0,32) [grows: the old buffer is given back]; ArenaGet(1,16) [handed the old buffer's address: overlaps it]"})
	FaultPlannerSharesOverlapping = DeclareFault(FaultInfo{Name: "planner-shares-overlapping", Engine: EngineProgram,
		Also:    []string{EngineSource},
		Summary: "the slot planner takes a lifetime's last statement as already over, so a variable shares its slot with the one defined by the statement that last reads it",
		Bug:     "An off-by-one at an interval's end in the liveness planner: the expiry test compared last < first as last <= first, so in x1 = f(x0), where x0 is last used, x1 was given x0's slot and the statement overwrote its own operand. The frame is one slot too small, and a read of x0 then finds x1 in its slot.",
		Trigger: "PlanFrame([{0,1},{1,1}]) = slots [0 0], size 1; FnEnter(1); ArenaGet(0,16,v0); ArenaGet(0,16,v1); Read(v0) [v0's slot holds v1]"})
	FaultMethodWithoutFrame = DeclareFault(FaultInfo{Name: "method-without-frame", Engine: EngineProgram,
		Summary: "a method runs without a frame of its own: its arena_gets land in its caller's frame (or in none), and its fn_exit pops the caller's",
		Bug:     "TensorLogic V2.1 compiled method bodies without the function-frame prologue, so a method that asked the arena for a buffer panicked with \"No function frame\" at top level, or, called from a function, took slots of the caller's frame; commit 3e006db gives methods a frame like functions.",
		Trigger: "MethodEnter(1) [no fn_enter recorded]; ArenaGet(0,16) [No function frame]"})
)

// The runtime's faults that only long programs show (EngineDrive). A new
// one goes at the end.
var (
	FaultU8Count = DeclareFault(FaultInfo{Name: "u8-count", Engine: EngineDrive,
		Summary: "the reference count is kept in a byte: at 256 references it wraps to 0, and a release from 257 frees an object still held 256 times",
		Bug:     "A C runtime written to the TensorLogic strategy kept each object's count in a uint8_t beside its scope flags, to fit its header in 16 bytes; no test held more than a few references, and a tensor shared by 257 graph nodes was freed while 256 of them still pointed at it. Generated programs of 20 to 60 steps never reach the 258 calls that show it (issue 25).",
		Trigger: "ScopeEnter; a=Alloc(16); Acquire(a) x256 [count 257, kept as 1]; Release(a) [count 256, kept as 0: a freed, still held 256 times]"})
)
