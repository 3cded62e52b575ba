// Package torchsnap reads and writes PyTorch memory snapshots, the pickles
// that torch.cuda.memory._dump_snapshot() writes and pytorch.org/memory_viz
// shows, as layer-4 trace events (device segments and pool blocks), so
// that the reference model checks a real CUDA caching allocator's history
// and any trace's device layer can be looked at in memory_viz.
//
// # What a snapshot holds
//
// One pickled dict (any protocol from 0 to 5) with, among other keys:
//
//	segments       the allocator's segments when the snapshot was taken, each
//	               {address, total_size, stream, is_expandable, frames,
//	               blocks: [{address, size, state, frames}, ...]}, blocks
//	               tiling the segment; an expandable segment is reported as
//	               one segment for each contiguous mapped range of it
//	device_traces  one list per device of trace entries, oldest first, each
//	               {action, addr, size, stream, frames, time_us}; frames are
//	               [{filename, line, name}, ...], innermost first
//	allocator_settings  the allocator's PYTORCH_CUDA_ALLOC_CONF options
//	               (PyTorch 2.4 on; Reader.Settings); oom entries carry the
//	               failed request and the device's free bytes (Reader.OOMs)
//	external_annotations  [{stage, name, time_us}, ...]: an optimizer's steps
//	               and other marked regions (Reader.Annotations)
//
// Beside the events, a Reader tells each event's Python stack (Stack, under
// Limits.Stacks) and which pool_puts had waited for another stream
// (Pending).
//
// # The mapping
//
// Trace entries become events one to one:
//
//	segment_alloc   dev_malloc addr size   (cudaMalloc of a segment)
//	segment_free    dev_free addr          (cudaFree)
//	alloc           pool_get addr size     (a block handed to a tensor)
//	free_completed  pool_put addr          (the block is back in the pool)
//	segment_map     dev_map addr size      (pages of an expandable segment mapped)
//	segment_unmap   dev_unmap addr size    (and unmapped)
//	free_requested, oom, snapshot, annotate: no event
//
// With PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True the allocator
// reserves one range of addresses per pool and stream and maps pages of it
// as it grows (segment_map) and unmaps free ones (segment_unmap, on
// empty_cache or before an out-of-memory retry); the reservation itself is
// in no entry. An unmap may take part of what one map mapped, or what
// several did, so the model keeps mapped bytes, not segments (FORMAT.md,
// dev_map).
//
// free_requested yields no event because the block is not yet free: the
// caching allocator keeps a block freed on one stream while another still
// uses it (record_stream) until the stream's work is done, and only then
// writes free_completed and may hand the block out again. Taking
// free_completed as the pool_put means that a block handed out between
// the two is an overlap the model reports, which is the bug to catch.
// oom, snapshot and annotate change no memory.
//
// An entry's innermost Python frame (a filename ending in ".py") becomes
// its site, as "filename:line"; where it has none, its innermost frame
// that memory_viz shows (it hides the unwinder, the interpreter loop and
// the dispatcher) and that names a file ("filename" alone where line is
// 0). With stacks="all", PyTorch's default, the innermost frames are the
// caching allocator's own C++, the same for every entry. time_us becomes t
// (ns); a stream other than 0 becomes the thread, "stream N". Entries of
// several devices are merged in time order: CUDA gives all devices one
// address space. Events are numbered from 0; a pickle has no lines, so
// Pos.Line is 0.
//
// # Live at the snapshot, and live before the trace
//
// A snapshot is taken mid-run. Its blocks still allocated are live, not
// leaked: the reader yields no end event, so the model runs no leak check,
// and a report says so (a snapshot is an incomplete trace). The trace may
// also begin mid-run: recording started late, or its ring buffer
// (max_entries) dropped the oldest entries. The reader rebuilds what was
// live when the trace began as memory_viz does, undoing the entries newest
// first from the segments at the snapshot, and yields it first: a
// dev_malloc for each segment and a dev_map for each mapped range, by
// address, then a pool_get for each block, with the site the snapshot
// gives them. Where PyTorch kept no frames for a thing made before
// recording began, the snapshot's segments name it through its neighbours:
// a block takes its segment's site, and a segment its largest live
// block's, so that the bytes reserved before recording began are not
// without a site in a profile. So a free of a block allocated
// before recording began is no violation; a free of something that was
// never live is indistinguishable from one and is not reported either
// (unless it lies outside every segment), which is a limit of snapshots,
// not of the model.
//
// # Reading as a stream
//
// The reader runs the pickle's opcodes one at a time, as Python's
// unpickler does, from an io.Reader, and keeps only what the events need:
// each container takes the role of its place in the snapshot (segments,
// a segment, its blocks, device_traces, a device's trace, an entry, a
// frames list, a frame) and keeps its fields, not its items; a container
// in a place the format ignores keeps nothing. A frame comes down to its
// file, line and whether memory_viz shows it; sites ("file:line") are made
// once for each file and line. Memory grows with the entries (about 40 bytes each), the
// distinct frames and the pickle's memo (16 bytes for each value it
// memoizes), not with the file; time is linear in the pickle.
//
// # Untrusted input
//
// A snapshot comes from outside. The reader refuses, naming the byte
// offset: any opcode that would import or call Python code (GLOBAL,
// STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, EXT*, persistent ids) or
// needs out-of-band buffers; sets and bytearrays; an unknown opcode; a
// length longer than what remains (without allocating it); a missing STOP
// or bytes after it; what Python's pickle refuses too (a string that is
// not UTF-8, an unhashable key, a stack underflow); protocol-0 integers of
// over 40 digits, and the bounds of the stack and memo (FORMAT.md,
// "Limits"). A snapshot of another shape (a missing key, a value of the
// wrong type, a list that holds itself, an integer over 64 bits for an
// address, an address plus size past 2^64, an unknown action or block
// state) is an *Error naming the path
// ("device_traces[0][17].addr"). Strings longer than Limits.MaxString are
// read past, checked, and not held; one in a field tlcheck reads is an
// error. The tests hold the reader to Python's own pickle module and to
// github.com/kisielk/og-rek (FuzzPickle).
//
// # Writing
//
// Writer writes a snapshot from segments' and blocks' lives: trace entries
// as they happen (segment_map and segment_unmap for mapped ranges), then
// the segments live at the end with their blocks (gaps as inactive
// blocks), a mapped run as a segment with is_expandable True. It uses only the opcodes memory_viz's own
// unpickler reads (protocol 4 without FRAME; no BINUNICODE8, BINBYTES or
// LONG4; integers of at most 8 bytes), memoizes repeated strings as
// Python's pickle does, and appends at most 1000 items at a time.
package torchsnap
