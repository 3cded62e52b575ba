// Package impl is a runtime memory manager modelled on the TensorLogic
// runtime (github.com/JunSuzukiJapan/tl): hybrid reference counting with a
// scope stack, structs whose fields are reference-counted, a parameter
// registry, and a simulated heap. Its books are kept by address, as a real
// runtime's must be, and it records what it does as trace events, so the
// model (package model, which keeps objects by identity) can check any run
// of it. A catalog of named faults, off by default, turns it into the
// buggy runtimes of TensorLogic's history.
//
// # Calls
//
// The calls are those of layer 2 of the trace format, one method each:
// ScopeEnter, ScopeExit, Alloc (alloc), StructInit, Acquire, Release,
// Register, Unregister, ParamRegister, ParamRelease and End. What each
// must do is the contract's, stated once in traces/FORMAT.md (Layer 2, and
// "What the model does where the contract is silent"); this runtime does
// exactly that, and the property tests hold it to the model after every
// call. What this page adds is what a runtime decides for itself: its
// addresses, its errors, what it records.
//
// Layer 3, arena frames, has FnEnter (fn_enter), FnExit (fn_exit) and
// ArenaGet (arena_get, with the variable); MethodEnter is FnEnter for a
// method's body; Read and Write record the accesses of tensor operations
// through variables. A function's temporaries are planned by PlanFrame,
// the compiler's liveness planner: variables whose lifetimes do not
// overlap share a slot, and the frame has as many slots as variables are
// live at once. Buffers come from chunks by bump allocation and die
// together at FnExit; a slot that grows gets a new buffer and keeps the
// old one valid until then. See arena.go and planner.go.
//
// A borrowed argument is expressed by making no call at all: a callee that
// only uses a value its caller owns neither registers nor acquires it, and
// the caller's record keeps it alive for the duration of the call. A callee
// that keeps or returns a borrowed value must Acquire it first.
//
// # NULL, zero-sized types
//
// A zero-sized type is NULL: Alloc(0) and StructInit(0, nil) return 0 and
// allocate nothing, and every call on NULL is a no-op (still recorded).
// ParamRegister(name, 0) leaves name as it was.
//
// # Address reuse
//
// The simulated heap gives each size class (powers of two from 16 bytes)
// its own address range and reuses freed blocks per Config.Reuse: ReuseLIFO
// (the default) hands back the most recently freed block first, as glibc's
// tcache does, so a new object often lands where one just died; ReuseFIFO
// holds freed blocks in a quarantine and reuses the oldest, as ASan does.
// Addresses are deterministic, 16-byte aligned and never 0. Arena
// chunks take addresses below the heap's, so an arena buffer never
// overlaps a heap block.
//
// Records, fields and parameters hold an address together with the
// generation of the block at that address when they were made, so they
// name an object, not an address. When a new object is made at an address,
// the records left there by the object that died are purged, and scope exit
// never acts on a dead object's record.
//
// # Misuse
//
// A call that breaks the protocol returns an *Error whose Kind is the
// violation kind the model reports for that event, and is recorded all the
// same, so replaying the recorded trace flags the same event. What the
// call then changes is what FORMAT.md says the model takes it to change:
// mostly nothing; an Alloc or StructInit with no scope open still makes
// its object (count 1, no record) and returns its address; a dead field or
// parameter object is reported for itself while the rest of the call goes
// on. A call that finds several misuses returns them joined, in the order
// found; errors.As finds the first. Misuse never corrupts the books and
// never panics. Only the faults corrupt them, on purpose.
//
// # Recording
//
// With Config.Record set, every call is handed over as a traces.Event (an
// alloc with the address the heap chose, a struct_init with its fields),
// and right after it a free event for every object the call really freed:
// a trace with effects on, under Header(). A Recording collects them and
// replays them as a traces.Source. Without a recorder the common calls do
// not allocate.
//
// # Faults
//
// Config.Faults switches on faults from Catalog, each a bug from the
// TensorLogic runtime's history with the shortest call sequence that shows
// it. A fault is one row (FaultInfo), declared with DeclareFault by the
// package whose code it breaks: this package the runtime's own
// (faultrows.go), impl/lang, impl/autograd, impl/gpu and impl/registry
// theirs. The code built on a Runtime (the lowering of impl/lang, the
// autograd engine of impl/autograd) asks HasFault for its own (Engine
// EngineSource, EngineAutograd), and Config refuses those of the GPU pool
// and the registry, which have no Runtime to break. The runtime's faults
// that only long programs show (EngineDrive: u8-count, a count kept in a
// byte) are its own too, hunted by package drive's programs.
//
// A Runtime is not safe for concurrent use.
package impl
