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
// The calls are those of layer 2 of the trace format (traces/FORMAT.md),
// one method each, with the contract's meaning:
//
//   - ScopeEnter pushes a scope; ScopeExit pops it and releases, newest
//     record first, the object of each record whose object is still alive.
//   - Alloc(size) makes a tensor, count 1, with a record in the top scope.
//   - StructInit(size, fields) makes a struct the same way and acquires each
//     non-NULL field; when the struct dies it releases its fields in order,
//     recursively, and is freed after them.
//   - Acquire and Release move the count; at 0 the object dies and its
//     block goes back to the heap.
//   - Register adds a record for an object to the top scope (the caller
//     takes a returned value); Unregister removes the object's newest record,
//     searching from the top scope down (a move, or a value being returned).
//     Neither changes the count. Unregistering a struct is shallow: its
//     fields keep their own records and counts.
//   - ParamRegister(name, a) acquires a and holds it under name, releasing
//     what name held before (after the acquire); ParamRelease(name) releases
//     it and forgets the name.
//   - End marks the end of a run.
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
// Addresses are deterministic, 16-byte aligned and never 0.
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
// contract's violation kind for that call, and is recorded all the same, so
// replaying the recorded trace flags the same event:
//
//   - a release of a dead object: double-free; any other call on a dead
//     object: use-after-free; a call on an address where no object was ever
//     made: invalid-address. Such a call changes nothing.
//   - ScopeExit, or Register, with no scope open; Unregister of an object
//     with no record; ParamRelease of a name held by no one; StructInit of
//     size 0 with a non-NULL field; End with scopes open: misuse, changing
//     nothing. Register with no scope is a misuse whatever it names.
//   - Alloc or StructInit with no scope open: misuse, but the object is
//     made (count 1, no record) and its address returned, because the
//     recorded event says that it was.
//   - a struct field, or a parameter's object, that is already dead when it
//     is to be acquired or released: the kind above, for that object alone;
//     the rest of the call goes on.
//
// A call that finds several misuses returns them joined, in the order
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
// it; see faults.go for the table.
//
// A Runtime is not safe for concurrent use.
package impl
