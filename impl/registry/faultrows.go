package registry

import "github.com/tlcheck/tlcheck/impl"

// The registry's faults (EngineRegistry), caught by the linearizability
// check of package lincheck. A new one goes at the end.
var (
	FaultRegistryCountOutsideLock = impl.DeclareFault(impl.FaultInfo{Name: "registry-count-outside-lock", Engine: impl.EngineRegistry,
		Summary: "the registry updates a buffer's alias count after releasing the shard lock, so concurrent aliases and unregisters lose updates and the buffer is freed early or twice",
		Bug:     "SCL-Core's pointer registry (seed 003) kept a buffer's count as an atomic it read and wrote back (load, then store) after the shard's lock was released, to keep the critical section short. Two threads aliasing one buffer at once both read the same count and one increment is lost; the buffer is then freed while an alias still names it, or a lost decrement leaves it for ever. Each access is atomic, so a race detector is silent; only a check of whole concurrent histories sees it.",
		Trigger: "RegisterBuffer(b,64); in parallel Alias(b,a1) || Alias(b,a2) [both read count 1, both write 2]; Unregister(b); Unregister(a1) [count 0: b freed, though a2 still names it]"})
	FaultRegistryAliasUnderflow = impl.DeclareFault(impl.FaultInfo{Name: "registry-alias-underflow", Engine: impl.EngineRegistry,
		Summary: "unregistering an alias decrements the buffer's count but leaves the alias registered, so unregistering it again frees the buffer under its real pointer and takes the count below zero",
		Bug:     "SCL-Core's unregister_ptr decremented a buffer's alias count without removing the alias's entry or checking that the count was still positive; a runtime that unregistered a view twice (once on drop, once on scope exit) freed the buffer while its owner still held it, and the count went negative, so the owner's own unregister never freed anything.",
		Trigger: "RegisterBuffer(b,64); Alias(b,a); Unregister(a); Unregister(a) [count 0: b freed, still registered]; Unregister(b) [count -1]"})
	FaultRegistryNoRecheck = impl.DeclareFault(impl.FaultInfo{Name: "registry-no-recheck", Engine: impl.EngineRegistry,
		Summary: "unregistering an alias whose buffer lives in another shard does not look at the alias again after taking both shards' locks, so a second Unregister of the name that ran in the window drops the buffer's count twice, and a name given away meanwhile is removed",
		Bug:     "The generic check-then-act race of lock upgrading: a sharded map that reads an entry under one lock, lets it go to take two locks in order (to avoid deadlock), and acts on what it read without reading again. SCL-Core's registry (seed 003) moves between a name's shard and its buffer's shard this way; without the second look, two threads unregistering one alias both decrement the count, so the buffer is freed while its owner still names it.",
		Trigger: "RegisterBuffer(r1,64); Alias(r1,p) [p and r1 on two shards]; in parallel Unregister(p) || Unregister(p), both past their first look while r1's shard is held [both succeed: r1's count drops twice, r1 freed while registered]"})
)
