// Package export writes what a trace did in forms other tools show: a
// Perfetto timeline, a pprof profile by allocation site, a self-contained
// HTML page and a PyTorch memory snapshot. The page's memory view (the
// active-memory timeline by site, the allocator's state at any moment, the
// findings on the timeline; README.md compares it with PyTorch's
// memory_viz) takes results of other analyses as PageExtras; an analysis
// fed by the model can run in the export's own replay (Options.Watch)
// and fill them in before the page is written.
//
//	sum, err := export.Write(w, export.Perfetto, src, "train.jsonl")
//
// Every format is a view of the reference model: Write replays the trace
// once against package model and builds the export from what the model
// tells of each thing's life as it decides it (model.Watch) and from the
// violations it reports. Nothing here reads an op's meaning, so a rule
// changed in the model is changed in every export.
//
// The contract:
//
//   - Write reads src to its end; its error is the input's (a
//     *traces.Error naming the event, exit-2 material) or, as a
//     *WriteError, the writer's. Either way what was written is not to be
//     kept; without an error, the Summary is the model's verdict.
//   - Memory grows with what the trace keeps alive (and, for pprof, with
//     its sites), never with its length: a trace of any length exports.
//     The HTML page is the exception: its memory view keeps every life
//     (64 bytes each) up to 2 million, then says where its detail stops.
//   - The Perfetto export streams: an input error leaves what came before
//     it written. The others are written at the end (pprof, html) or as
//     the device layer's lives end (torch-snapshot).
//   - Leaks count where the model counts them: those found up to the first
//     end, less the missed frees freed late before it.
//   - Device memory is named as PyTorch names it: reserved (segments and
//     mapped ranges, what the device's live bytes count) and allocated
//     (pool blocks, inside them); Summary.Device holds both, peaks and
//     ends, and each view labels which it shows.
package export
