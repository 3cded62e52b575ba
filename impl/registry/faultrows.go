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
)
