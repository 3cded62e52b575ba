// Package flat is the flat program language: a Program is a sequence of
// runtime calls, any call of the table in calls.go, one row per call (the
// layer-2 calls scope_enter, scope_exit, alloc, struct_init, acquire,
// release, register, unregister, param_register and param_release, and the
// layer-3 calls fn_enter, fn_exit, arena_get, read and write). The package
// is the language and nothing else: it imports traces and the model, and
// no runtime, so that a harness for a runtime in another process (package
// drive) links only what its job needs. Package properties runs programs
// against impl's runtime with the model as oracle.
//
// A row says everything about its call's syntax: its op bytes, its
// operands, what it needs of the program so far, and how the shrinker may
// make it plainer; a call of a new layer is one row here and one
// invocation in package properties, and the tests of both fail by name
// when a step of adding one is left out. A step's operands name objects by
// position among what the program knows when the step runs (a Ref: the
// i-th live object, the i-th dead one, or NULL), so any subsequence of a
// program is a program, and shrinking can drop steps freely. A layer-3
// frame is planned: its fn_enter declares its variables' lifetimes, a
// planner gives each a slot, and reads and writes go through variables
// live at the current statement, as the program itself knows them
// (Frames).
//
//   - Decode turns any byte string into a program; Generate draws one
//     through the same decoder; Encode writes the bytes of a program back,
//     for fuzz seeds. DecodeStep and Shape let a generator that draws one
//     step at a time weight its draws as Decode does.
//   - Program.String lists a program; ParseProgram reads a listing back.
//   - ShrinkWith shrinks a failing program by delta debugging, with the
//     caller judging each candidate.
//   - Resolve makes a program's calls as a correct runtime is asked to,
//     with the model alone deciding what is alive: no runtime runs, and
//     no address is reused (package drive sends them to another process).
//   - CallOf, Ops and Operands expose the table's rows, read-only, to the
//     harnesses that make the calls; Choose is the one rule by which every
//     harness turns a Ref into an address; Frames and PlanFrame are layer
//     3's bookkeeping, the same for every harness.
//
// The byte encoding is stable: each call owns a fixed range of op bytes,
// and bytes from 240 up are reserved for the calls of later layers (layer
// 3 took 192 to 239), so a call added there leaves every saved program's
// meaning alone. fuzz/ keeps each FuzzProgram seed beside its readable
// program and checks that the one still decodes to the other.
package flat
