// Package input opens what tlcheck reads: a trace in the tlcheck trace
// format (either layout), a glibc mtrace log, or a PyTorch memory snapshot,
// told apart by their first bytes unless the caller names the format.
//
//	in, err := input.Open("train.jsonl", input.Options{})
//	if err != nil { ... } // names the file, with a hint where it looks like another format
//	defer in.Close()
//	rep, err := model.Replay(in)
//	if err != nil { err = in.Explain(err) } // an error met while reading, with the file's name
//
// The contract:
//
//   - Open reads at most a few hundred bytes before it returns; an Input
//     is a traces.Source (and a traces.Lender) that yields exactly the
//     events its reader does, read ahead on a goroutine of its own so that
//     parsing and checking run on two cores. Close stops that goroutine
//     and closes the file; it may be called more than once.
//   - Auto reads a file that starts as a pickle of a dict does (PROTO,
//     byte 0x80, of any protocol; protocol 1's "}q", protocol 0's "(dp")
//     as a snapshot, one whose first line that is not blank starts as only an
//     mtrace line can as mtrace, and anything else as a trace. A named
//     format is used as given; where the file looks like another, the
//     error says which and how to read it.
//   - Every error names the file ("<stdin>" for standard input); a
//     *traces.Error gets its File set, so its message names file, line,
//     event and field.
//   - A file that several analyses read, each from its start, is a
//     Reread: standard input is read whole once and served from memory.
package input
