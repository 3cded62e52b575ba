// Package drive drives a tensor runtime in another process, in any
// language, with generated programs: the flat program language's
// generator, resolver and shrinker (package properties/flat) and the model
// of package model, over the
// tlcheck-drive protocol (PROTOCOL.md beside this file, with its JSON
// Schema), JSON Lines on the driver's stdin and stdout.
//
// A driver is a small program beside the runtime: it says hello (the
// protocol version, the layers and calls it takes), then answers each call
// it reads, which names objects by handle, with the trace events its
// runtime recorded (real addresses) and the outcome: done, or refused with
// the runtime's message. A reset between programs lets one process serve
// many. examples/cruntime is a runtime in C with its driver; impldriver is
// the Go runtime of package impl behind the same protocol.
//
// A team's five-line go test over its driver is package drivetest's
// (drivetest.Test, drivetest.Fuzz), as net/http/httptest is beside
// net/http. The API, small on purpose:
//
//	Start, Driver          one driver process: Run a program's calls, Close
//	NewRunner, Runner      a driver started again when a run broke it:
//	                       Run, RunProgram, Stream (two programs in flight),
//	                       Search (generate, check, shrink), Shrink, Last
//	Lower                  a generated program as the calls the protocol sends,
//	                       resolved by the model alone (no runtime runs)
//	GenerateProgram        a program of correct use, with the deep shapes
//	                       (counts past 256, deep scopes, reused addresses)
//	Correct                any program made one of correct use
//	GenerateMisuse         a program that may misuse the runtime, for a
//	                       driver whose hello asks ("misuse"; Options.Misuse)
//	AnswersDiffer          two runs of the same calls compared: determinism
//	Result, Failure        a run checked: calls, outcomes, trace, what broke
//	Finding                a failure shrunk, written as NAME.calls.jsonl
//	                       beside NAME.trace.jsonl
//	ReadCalls, WriteCalls  calls files: counterexamples, replayable
//	StderrText             a driver's last stderr for a report (empty, said so)
//	ParseCall, Call        the protocol's calls, for drivers written in Go
//	Answer, ParseAnswer    a driver's answer line, written and read
//	Diff, Disagreement     two drivers of layer-5 programs held to each
//	                       other call by call (the Go engine to PyTorch)
//	Compare                a calls file run once on two drivers, compared
//	Departure, Departed    a difference a driver's hello declares, which
//	                       Diff and Compare set aside, counted
//
// Layer 5, autograd programs (PROTOCOL.md, "Layer 5: autograd programs"),
// for a driver whose hello lists layer 5, as examples/torchdriver's for
// real PyTorch does:
//
//	TensorCall, TensorOp   a call of an autograd program, on tensors by handle
//	ParseTensorCall        ... read, for drivers written in Go
//	TensorState, Grad      the tensor and gradients an answer carries
//	GenerateTensorProgram  a random autograd program
//	RunTensor, StreamTensor  run them (Driver, Runner); Search picks them for
//	                       a driver of layer 5 alone
//	ShrinkTensor           a failure shrunk to a few calls
//	Read/WriteTensorCalls  their calls files
//
// By default every program uses the runtime as its contract says (no
// release of a reference the program does not hold, no call on an object
// it let die), so that a runtime that keeps its books by address needs no
// layer of its own to pass; a driver whose hello says "misuse" gets
// programs of misuse too. A finding is run once more alone, in a driver
// started for it, before it is reported, and says so when it does not
// fail again: the driver is then not deterministic. A hello that says
// "restart" gets a process per program.
//
// tfjs programs (PROTOCOL.md, "tfjs programs"), for a driver whose hello
// lists "tfjs" among its programs, as examples/tfjsdriver's for
// TensorFlow.js does: TensorFlow.js's memory API (tidies, keep, dispose,
// variables, gradients, optimizers) observed inside the runtime as events
// of layers 1 and 2:
//
//	TfjsCall, TfjsOp       a call of a tfjs program, by handle
//	GenerateTfjsProgram, TfjsProgram, CheckTfjsProgram
//	                       a random program, the search's k-th, well-formedness
//	RunTfjs, StreamTfjs    run them (Runner); TfjsResult, TfjsMemory
//	SearchTfjs, SearchTfjsParallel, ShrinkTfjs, TfjsFinding
//	Read/WriteTfjsCalls    their calls files
//
// Each answer is checked as it comes: its id, the call's own event (the
// call made, at the handles' addresses, then only frees), every event
// through the model, each violation explained by the program (a refused
// call, a leak the program kept) or a failure, each refusal one the model
// finds misuse in. An answer to a layer-5 call has no call's own event:
// the kinds the model reports at its events must be exactly the kinds the
// driver refused it with, none where it did the call (the access a
// refusal names is judged without being taken). A driver that exits,
// hangs past the call timeout or
// writes what is not the protocol is a failure too (a Trouble), with the
// last of its stderr, kept in a bounded ring; answers are bounded lines.
//
// The walls hold: package drive imports the model, traces and the flat
// program language (package properties/flat), and no runtime: not impl
// nor any package under it, not properties, and not testing, so that a
// program that drives a runtime in C links no Go runtime and no test
// framework (TestDriveLinksOnlyWhatItNeeds holds it). None of those
// packages imports drive.
package drive
