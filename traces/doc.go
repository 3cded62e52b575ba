// Package traces is the event language of tlcheck: what a memory runtime
// did, event by event, in a file any runtime in any language can write, and
// the Go codec that reads and writes it. FORMAT.md beside this file is the
// full specification, with an example of every op and violation; schema.json
// is its JSON Schema. In brief:
//
// # Files
//
// A trace is UTF-8 JSON in one of two layouts, told apart by the first value.
// A stream (JSON Lines, the layout to write from a running program) has the
// header object on line 1, then one event object a line; blank lines are
// ignored:
//
//	{"format":"tlcheck-trace","version":1,"effects":false,"source":"myrt 0.3"}
//	{"op":"malloc","addr":"0x7f3a10","size":64,"site":"main.c:10"}
//	{"op":"free","addr":"0x7f3a10"}
//	{"op":"end"}
//
// A document is one object holding the header fields and an "events" array:
//
//	{"format":"tlcheck-trace","version":1,"events":[{"op":"end"}]}
//
// The header needs "format":"tlcheck-trace" and "version":1; "effects"
// (boolean, default false) and "source" (free text) are optional. With
// "effects":true the runtime also writes a free for every object it really
// freed, right after the call that caused it, and the checker holds those
// frees against its model. Events are numbered from 0, the header not
// counted; reports name an event by that number and by the line it starts
// on. The last event of a run is {"op":"end"}: the leak check runs there.
//
// # Events
//
// Every event has "op" and the fields its op requires; any event may also
// have "site" (a source location, quoted in reports), "t" (an integer, ns)
// and "thread" (a string or an integer). An address ("addr", "new_addr",
// the items of "fields") is a hex string such as "0x7f3a10" or a
// non-negative integer below 2^64; "0x0" is NULL. Sizes are non-negative
// integers below 2^64, slot numbers and slot counts integers from 0 to
// 2^31-1, streams non-negative integers below 2^64. "count", on the layer-2
// ops that name one object, is that object's reference count after the
// op as the runtime believes it; the model checks it at that event.
//
//	layer 1, raw heap:      malloc addr size · free addr · realloc addr new_addr size ·
//	                        read/write addr [size] [var] [space "heap"|"device"]
//	layer 2, managed:       scope_enter/scope_exit · alloc addr size [kind] [count] ·
//	                        struct_init addr size fields [count] ·
//	                        acquire/release/register/unregister addr [count] ·
//	                        param_register name addr [count] · param_release name [count] · end
//	layer 3, arena frames:  fn_enter slots · fn_exit · arena_get slot addr size [var]
//	layer 4, device:        dev_malloc addr size · dev_free addr · pool_get addr size ·
//	                        pool_put addr · record_stream addr stream · dev_map/dev_unmap addr size
//	layer 5, autograd:      save name addr [kind] · unpack/unsave name · bump addr [kind] ·
//	                        leaf_grad addr · snapshot/restore name addr · recompute name
//
// Keys may come in any order. Unknown fields, of any type, are ignored; a
// known field must have its type on every op, and null stands for an
// optional field left out. An unknown op, a missing field or a value of the
// wrong type is an input error that names the line, the event and the field.
//
// # This package
//
// [Reader] reads either layout as a stream of [Event] values without holding
// the trace in memory; it allocates nothing per event once warm and reports
// bad input as an [*Error] naming its place. [Writer] writes either layout
// ([NewWriter] for a stream, [NewDocumentWriter] for a document), and
// [AppendEvent] gives an event's canonical JSON. Whatever the Writer writes,
// the Reader reads back as it was.
//
// [Source] is what the reference model consumes: a Reader, or a reader of
// another input that maps onto the same events (package traces/mtrace reads
// glibc mtrace logs, package traces/torchsnap PyTorch memory snapshots). [Kind], [Violation] and [Report] are the verdict on a
// trace, in the JSON shape of `tlcheck replay --json`; [State] is the
// observable state of a managed-object runtime, which property tests compare.
package traces
