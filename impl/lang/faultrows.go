package lang

import "github.com/tlcheck/tlcheck/impl"

// The codegen faults (EngineSource): bugs of the code a compiler emits
// around calls, returns, branches and loops, not of the runtime. Only the
// lowering of source programs has them, when the runtime it drives has
// them on (HasFault). A new one goes at the end.
var (
	FaultReturnCleansInnermost = impl.DeclareFault(impl.FaultInfo{Name: "return-cleans-innermost-scope", Engine: impl.EngineSource,
		Summary: "an early return exits only the innermost scope: the scopes around it stay open, their values alive",
		Bug:     "TensorLogic's codegen emitted, for a return inside a nested block, the cleanup of the innermost scope only; the enclosing scopes of the function were neither exited nor released, so their tensors leaked and the runtime's scope stack was left deeper than the caller expected. Commit 6a69c03 makes return walk every scope of the function, innermost first.",
		Trigger: "fn f() -> Tensor { let a = zeros(16); { let b = zeros(16); return b; } } [a leaks; f's body scope stays open]"})
	FaultBreakInIfSkipsCleanup = impl.DeclareFault(impl.FaultInfo{Name: "break-in-if-skips-cleanup", Engine: impl.EngineSource,
		Summary: "a break or continue inside an if (nested in the loop body) jumps out without exiting the scopes it leaves",
		Bug:     "The loop lowering emitted the loop body's cleanup before a break that sat directly in the body, but a break inside a nested if branched straight to the loop's exit block: the if's scope and the body's scope were never exited. Commit 33b947f emits the cleanup of every scope between the break and the loop.",
		Trigger: "for i in 0..2 { let a = zeros(16); if i == 0 { break; } } [a leaks; two scopes stay open]"})
	FaultBlockResultFreed = impl.DeclareFault(impl.FaultInfo{Name: "block-result-freed", Engine: impl.EngineSource,
		Summary: "the value of an if or block expression is not unregistered before its block exits, so the exit frees it and the caller receives a dead value",
		Bug:     "TensorLogic's if and block expressions returned a temporary made in the block; the block's exit_scope freed it before the enclosing let could register it, a use-after-free. Commits f404821 and 14aa0d1 unregister the block's result (as a return does) before the scope exits.",
		Trigger: "let x = { let t = zeros(16); t }; [t freed at the block's end, then registered as x]"})
	FaultCallerNoRegister = impl.DeclareFault(impl.FaultInfo{Name: "caller-does-not-register-result", Engine: impl.EngineSource,
		Summary: "the caller does not register the value a call returns, so no scope ever releases it",
		Bug:     "The callee unregisters what it returns and the count travels to the caller, whose let must register it; before commit a934c11 the codegen skipped that register for call results, so every returned tensor outlived its variable's scope: a leak per call.",
		Trigger: "fn f() -> Tensor { let t = zeros(16); return t; } fn main() { { let x = f(); } } [x's tensor outlives its block]"})
	FaultCalleeReleasesBorrowed = impl.DeclareFault(impl.FaultInfo{Name: "callee-releases-borrowed", Engine: impl.EngineSource,
		Summary: "the callee releases its parameters at its exit, though they are borrowed: the caller's values are freed under it",
		Bug:     "TensorLogic's borrowing rule makes parameters borrowed (no acquire, no release); the function epilogue released them anyway, as if they were owned locals, and the caller's tensor died while the caller still held it. Commits 6103f3d and 25cbbe3 stop the callee from releasing its arguments.",
		Trigger: "fn f(a: &Tensor) -> Tensor { let t = zeros(16); return t; } fn main() { let a = zeros(16); let b = f(&a); } [a freed at f's exit, freed again at main's]"})
	FaultRegisterTwice = impl.DeclareFault(impl.FaultInfo{Name: "returned-value-registered-twice", Engine: impl.EngineSource,
		Summary: "the caller registers a returned value twice, so its scope releases it twice",
		Bug:     "Generated code registered a call's result, and the let that received it registered the same pointer again: two records for one count, and the second release at scope exit freed memory already freed (or another tensor at the same address). Commit 1371d0e registers a pointer once.",
		Trigger: "fn f() -> Tensor { let t = zeros(16); return t; } fn main() { let x = f(); } [x's tensor released twice at main's end]"})
	FaultMoveStillReleased = impl.DeclareFault(impl.FaultInfo{Name: "move-still-released", Engine: impl.EngineSource,
		Summary: "a move at a variable's last use leaves the moved-from variable's record, so its scope releases the value the new owner holds",
		Bug:     "A move transfers a count without an acquire; the compiler must also drop the source's cleanup (TensorLogic's move at last use unregisters the source). Leaving the source's record in its scope releases the value once for each owner: a double free at scope exit.",
		Trigger: "let x = { let a = zeros(16); let b = a; b }; [a's record, left behind, frees the value x receives at the block's end]"})
	FaultEmitRetainOverRetains = impl.DeclareFault(impl.FaultInfo{Name: "emit-retain-over-retains", Engine: impl.EngineSource,
		Summary: "a struct literal retains its tensor fields again after struct_init already acquired them: each struct keeps its fields one count too many, and memory grows each iteration",
		Bug:     "TensorLogic's struct initialisation deep-clones (acquires) each field; emit_retain, written for struct values, was also emitted for tensor fields, so each field got a second count that nothing released. In a training loop the tensors of every iteration stayed alive: the memory growth per iteration that commit 4419a90 removed.",
		Trigger: "for i in 0..2 { let t = zeros(16); let s = S { f0: t }; } [t survives each iteration]"})
	FaultSretSourceKept = impl.DeclareFault(impl.FaultInfo{Name: "sret-source-kept", Engine: impl.EngineSource,
		Summary: "a struct returned by destination passing is copied into the caller's destination, its fields acquired, but its source is kept as if moved: never released, it outlives the call and its fields keep a count too many",
		Bug:     "TensorLogic returns a struct by destination passing (SRET): the caller reserves the destination, and the callee's return copies the struct into it (emit_struct_copy, which acquires each field). Its memory strategy (docs/dev/MEMORY_MANAGEMENT_STRATEGY.md, V5.1) records the bug: the source variable was marked CLEANUP_NONE, as if moved, so exit_scope never dropped its references and every struct return left its fields' counts one too high; main's final cleanup then met the accumulated counts and crashed (SIGBUS). It was worked around, not fixed, by ending main with exit(0).",
		Trigger: "fn f() -> Box { let t = zeros(16); let b = Box { f0: t }; return b; } fn main() { let x = f(); } [b outlives f, and t keeps b's count]"})
	// A codegen fault: the lowering's liveness analysis (issue 17).
	FaultLoopLifeEndsFirstLoop = impl.DeclareFault(impl.FaultInfo{Name: "loop-life-ends-first-loop", Engine: impl.EngineSource,
		Summary: "a variable declared outside two loops and used in both is kept live only to the end of the first: the slot plan hands its slot to a variable the second loop defines, and the second loop's next turn reads the variable through a slot that holds another's data",
		Bug:     "This project's own lowering had it until issue 17, and the README's first 'tlcheck fuzz --source' found it on the correct path: the liveness analysis extended a variable's lifetime to the end of the first loop around a use and never looked at a later one. A liveness-based slot planner must treat every loop around a use as a use at the loop's last statement (a loop-carried use), as TensorLogic's compiler keeps a tensor variable in its frame across the turns of any loop that reads it.",
		Trigger: "fn main() { let a = zeros(32); for i in 0..1 { let b = a; } for i in 0..2 { let c = add(a); let d = zeros(32); } } [d takes a's slot; the second turn reads a through it]"})
)
