// Package model is the reference model of tlcheck: an executable statement
// of what a correct memory runtime must do, checked event by event against
// a trace (see traces/FORMAT.md for the events and violation kinds).
//
//	r, err := traces.NewReader(f)
//	...
//	report, err := model.Replay(r) // err: unreadable input only
//
// [Replay] checks a whole [traces.Source]; a [Checker] does it one event at
// a time ([New], [Checker.Step], [Checker.Close], [Checker.Report]) and
// shows the layer-2 state a runtime must have ([Checker.State]), for
// property tests that drive a runtime and the model side by side.
//
// # Identity and memory
//
// Everything a trace makes — heap block, managed object, arena buffer,
// device segment, pool block — is a thing, numbered from 1 in the order
// made (Violation.Object). Scope records, params and struct fields name
// things, not addresses, so a reused address cannot fool the model. An
// address resolves through the index (package model/internal/index: a
// sparse page table per address space, a few hash lookups per event) to
// the things remembered there: the live ones, and dead ones until a new
// allocation in the same space takes their range. Memory therefore grows
// with what is alive and with the address ranges in use, never with the
// number of events. A thing remembered, a dead heap block included, costs
// 64 bytes and its share of the page table: about 90 bytes in all on a
// large heap. Nothing is allocated per event but the objects a trace makes
// (other things reuse the memory of forgotten ones) and the first record
// of each site.
//
// Built with the tag naiveindex, the model uses a plain index instead, a
// slice scanned on every query: slow, and the reference the tuned one is
// tested against (both run the model's tests). What the rules say of each
// kind of thing is one row of the table in kinds.go.
//
// # Rules where the contract is silent
//
// traces/FORMAT.md ("Decisions") states the same rules for those who write
// traces; a change to one is a change to both, and the corpus under
// traces/testdata/corpus pins them.
//
// Addresses.
//   - An op that names a thing (free, release, dev_free, ...) names the one
//     that starts at its address, of the kinds the op applies to: the
//     newest live one, else the newest dead one still remembered. An
//     address inside a thing, or at a thing of another kind (release of a
//     heap block), is invalid-address, and the message says what is there.
//   - A read or write checks its first and last byte (size 0 or none: one
//     byte); each resolves to the newest thing holding it, live or dead, so
//     a dead arena buffer inside a live heap block is still dead, and a
//     dead pool block inside a live segment is use-after-free. An access
//     that runs past the end of what it starts in is invalid-address. A
//     live segment may be accessed outside any pool block.
//   - NULL: a failed allocation (malloc, realloc's new_addr, dev_malloc,
//     pool_get, arena_get) changes nothing; free, dev_free, pool_put of
//     NULL are no-ops; every layer-2 op on NULL is a no-op.
//
// Overlap.
//   - The classes are: heap blocks and objects; arena buffers; segments;
//     pool blocks. Things of different classes may nest (an arena buffer
//     inside a malloc'd arena, a pool block inside a segment).
//   - A malloc or realloc whose block starts where a live block starts is
//     an overlap and is otherwise ignored: the live block keeps its size
//     and site. glibc's mtrace script does the same, so leak lists agree.
//     Any other overlap leaves both things live; the newer wins lookups.
//     A malloc over a live object is such an overlap: the object lives
//     on for ops that name objects, and a free finds the block.
//     An overlap's Object is the new thing, or the live block when the
//     allocation is ignored.
//   - A thing made in a dead thing's range makes the model forget the dead
//     one, whatever the kinds (a pool block in a dead segment too).
//
// Layer 2.
//   - scope_exit releases its records newest first, as the contract says.
//   - alloc or struct_init with no scope open is misuse, but the object is
//     made (count 1, no record), taking the runtime's word that it exists.
//     Every other misuse changes nothing.
//   - A struct field that is dead or unknown at struct_init is reported
//     (use-after-free, invalid-address) and left out of the struct. A dying
//     struct releases its fields in order; a field already dead is a
//     double-free at the event that killed the struct.
//   - param_register acquires the new object before it releases the old
//     one, so re-registering an object keeps it alive; releasing a dead old
//     object is a double-free. Ops on NULL leave the name as it was.
//   - unregister of a dead object is use-after-free; of a live object with
//     no record, misuse.
//
// Layer 3.
//   - arena_get at the slot's current address hands out that buffer again
//     (its size is not checked). A frame's slots cost nothing until used.
//   - A read or write with var looks the variable up in the top frame
//     only; if its slot now holds another variable it is stale-reuse and
//     the address is not checked too. A var the top frame never bound is
//     ignored.
//
// Layer 4.
//   - dev_free kills the pool blocks still handed out from the segment:
//     putting one back later is a double-free, using it use-after-free.
//   - pool_get in a dead segment is use-after-free; outside every segment,
//     or running past its end, invalid-address. The block is made either
//     way, so its pool_put is checked too.
//
// Effects.
//   - After every event other than a free, objects whose count reached 0
//     are due, and are dead to every op. The frees that follow must free
//     exactly them, in any order. At the next other event (or end) a due
//     object not freed is a leak named after the call (its event, line
//     and site), and dead from then but to its own late free, which is
//     accepted once and takes it off the leaked count. At Close (the file
//     ended) frees still due are not claimed. Step reports a leak late;
//     Replay puts violations in event order.
//   - free (and realloc's free half, which follows the same rules) may name
//     a block or an object. A free of a live object that is not due is
//     premature-free, or stale-reuse when the call before it was a
//     scope_exit that skipped a stale record of a dead object at that same
//     address. Either way the object is dead: a struct releases its fields,
//     which may become due.
//   - Without effects, a free naming an object (live or remembered) is an
//     input error: Step and Replay return a *traces.Error, Field "addr".
//
// End.
//   - Only the first end checks; later events are still checked. At end:
//     one misuse for open scopes and one for open frames (related: where
//     each was entered, the first eight), then a leak for each live thing
//     nothing holds, in the order made.
//   - Every thing live at end counts once, as leaked (heap blocks, pool
//     blocks not put back, objects no param or open scope's record reaches,
//     directly or through struct fields) or as still reachable (those
//     objects, buffers of open frames, and device segments still reserved:
//     a caching pool keeps its segments by design).
//   - Report.Leaked counts, at end, the missed frees not freed late as
//     well as what end found. Without end there is no end check, the
//     totals are zero and Report.Complete is false.
//
// Report.
//   - PeakLiveBytes counts declared sizes of blocks, objects, arena buffers
//     and segments (pool blocks lie inside segments); a due object counts
//     until it is freed.
//   - Related events say what they were: "allocated", "died", "freed",
//     "frame exited", "put back", "count reached 0", "stale record made",
//     "parameter registered", "parameter \"w\" registered" and "scope record
//     made" (what still holds a prematurely freed object), "struct
//     allocated", "scope entered",
//     "frame entered", "variable \"x\" bound", "slot given to variable \"y\"".
//   - State shows live objects (not due ones) by address, the newer where
//     two share one; scope records of live objects; every param, even one
//     holding a dead object. Its maps and slices are never nil.
package model
