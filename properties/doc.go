// Package properties checks the runtime of package impl against the
// reference model of package model, over generated programs: the one place
// (with fuzz/ and cmd/) where the two meet.
//
// A Program is a program of the flat language (package flat, which holds
// its syntax: the call table, the byte codec, listings, the shrinker's
// passes): a sequence of runtime calls of layers 2 and 3, whose operands
// name objects by position among what the program knows when the step
// runs. This package makes those calls on impl's runtime: one invocation
// per row of flat's table (calls.go), each operand resolved against what
// the model holds alive, and layer 3's frames planned by the runtime's own
// planner (frames.go).
//
// Run drives the runtime with a program and feeds each event the runtime
// records (its calls and, with effects, its real frees) to a model.Checker.
// After every call it gathers what the properties need: the model's
// violations, whether the runtime refused the call with the model's kind,
// whether it recorded the call it was asked to make, and whether its state
// (live objects and counts, scope records, params) equals the model's:
// after every call, end's included, by a fast comparison
// (impl.Runtime.Matches) that tests hold to sameState and it to go-cmp's
// verdict field by field, go-cmp writing the diff. After the last step Run
// tears the program down the way a well-behaved caller would (scopes
// exited, params released), calls end, and, where the run failed, replays
// the written trace, the one the failure hands its user, through the model
// once more.
//
// The properties are named code over a run's Result (see Properties):
//
//	NoDoubleFree     no double free the runtime did not refuse
//	NoUseAfterFree   no use after free the runtime did not refuse
//	NoPrematureFree  no free of an object that still has references
//	NoStaleReuse     no action meant for an address's old object hits its new one
//	NoLeak           every object whose count reaches 0 is freed at once
//	Refines          after every call, the runtime's state, answer and record are the model's
//
// A run fails with the property broken at the earliest call. Shrink turns
// a failing program into a small one that fails the same way, and its
// Failure carries the run's trace: the file `tlcheck replay` rejects.
// Search hunts with generated programs from a seed. The tests state the
// same property twice more, with rapid's state machines and with gopter's
// commands, and show that every fault of impl.Catalog whose Engine is
// impl.EngineProgram is caught.
//
// # Other program languages
//
// Each program language is a harness.Language value (package
// properties/harness: one search, one shrinker driver, one failure, one
// writer of counterexamples for all): FlatLanguage here for the programs
// above, AutogradLanguage for the autograd programs below, and the pool
// programs (package properties/pool) and source programs (package
// properties/source) in packages of their own. Package hunt hunts the
// fault catalog with the list of them.
//
// # The autograd property
//
// An AutogradProgram (autograd.go) is a list of steps on the autograd
// engine of package impl/autograd, built over a recording Runtime: leaves,
// ops, views, in-place ops, backward, detach, scopes, ZeroGrad and
// ClearGrads, and freeing a graph (FreeGraph) or dropping a tensor (Drop),
// under either lifetime of the engine (TensorLogic's or PyTorch's). Its
// steps, their generator and episodes, their byte decoding and their
// shrinker are the autograd language's (package properties/autograd),
// whose one table of operations drive's layer-5 calls share; this package
// holds the runner, which alone imports the engine. RunAutograd runs one, with the autograd faults switched on in the
// runtime's Config, and checks:
//
//	RuntimeUse  the engine never misuses the runtime (no *impl.Error)
//	Versions    an in-place op bumps every alias of its storage by one, and nothing else
//	ClearGrads  after ClearGrads no leaf keeps a grad
//	Held        PyTorch's lifetime: a tensor the program holds is alive
//	Model       the recorded trace, replayed by the model, has no violation
//
// SearchAutograd and ShrinkAutograd hunt and shrink as Search and Shrink
// do, and RunAutogradBytes is FuzzAutogradProgram's body; the tests show
// that every fault whose Engine is impl.EngineAutograd is caught.
package properties
