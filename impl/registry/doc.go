// Package registry is a pointer registry safe for concurrent use, after
// the one of SCL-Core (seed 003): a runtime registers every block it hands
// out, asks whether a pointer is its own, and unregisters a block to free
// it, from any goroutine.
//
// # Contract
//
// A Registry holds pointers (Ptr, never NULL). Each is one of:
//
//   - a plain pointer, made by Register(p, size): Unregister(p) removes it
//     and frees it at once, through Config.Free, with KindHeap;
//   - the real pointer of a buffer, made by RegisterBuffer(p, size, kind);
//   - an alias of a buffer, made by Alias(real, a): a second name for the
//     buffer's memory (a view, a handle), which counts as a reference.
//
// A buffer's count is its real pointer plus its aliases. Unregistering the
// real pointer or an alias removes that name and decrements the count;
// the call that brings it to 0 frees the buffer's memory with the
// buffer's Kind. Until then the buffer is live: its bytes count, and its
// real address cannot be registered again, even after the real pointer
// itself was unregistered.
//
// Every call is atomic (linearizable): it holds the lock of each shard it
// touches for its whole effect, taking shards in index order, and a query
// of the whole registry (TotalBytes, Pointers, Buffers, Leaks) holds every
// shard's lock at once. The package lincheck beside this one checks
// concurrent histories of a Registry against a sequential model with
// porcupine.
//
// Misuse is an error, never a panic, and changes nothing: NULL, a pointer
// registered twice, an address a live buffer still holds, an alias of
// something that is not a registered real pointer, an unregister of a
// pointer not registered. Errors are *Error values that name the call and
// the pointer; errors.Is finds the sentinel (ErrNotRegistered and the
// rest).
//
// # Sharding
//
// A pointer belongs to shard hash(ptr) % Config.Shards (16 by default),
// each with its own lock, so calls on different pointers rarely wait on
// each other. A buffer's count lives in its real pointer's shard; an
// alias's name lives in the alias's shard, so an alias call takes two
// locks when the two fall in different shards.
//
// # Callbacks
//
// Config.Free is called once per freed block, after the call has released
// its locks, so it may take its time or call the registry. Config.Record
// receives layer-1 trace events (malloc when a block is registered, free
// when it is freed) while the shard's lock is held, so events on one
// address are recorded in the order they happened; it must be safe for
// concurrent use and must not call the registry. A run recorded with an
// end event (End) is a trace that tlcheck's model can replay: a block
// still registered at the end is a leak, and the leak report (Leaks)
// lists exactly those blocks.
//
// # Faults
//
// Config.Faults switches on faults of impl's catalog whose Engine is
// "registry" (impl.EngineRegistry): bugs that break the contract above on
// purpose, so that the linearizability check can be shown to catch them.
//
// # API
//
// New, Config; Register, RegisterBuffer, Alias, Unregister; IsRegistered,
// TotalBytes, Pointers, Buffers; Leaks, End; Ptr, Kind, Block, Error.
package registry
