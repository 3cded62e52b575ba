// Package properties checks the runtime of package impl against the
// reference model of package model, over generated programs: the one place
// (with fuzz/ and cmd/) where the two meet.
//
// A Program is a sequence of runtime calls: any call of the table in
// calls.go, one row per call (the layer-2 calls scope_enter,
// scope_exit, alloc, struct_init, acquire, release, register, unregister,
// param_register and param_release, and the layer-3 calls fn_enter,
// fn_exit, arena_get, read and write). A layer-3 frame is planned: its
// fn_enter declares its variables' lifetimes, the runtime's planner gives
// each a slot, and reads and writes go through variables live at the
// current statement, as the program itself knows them (frames.go). A row says everything about its call:
// its op bytes, its operands, what it needs of the program so far, and how
// the harness makes it on the runtime; a call of a new layer is one row,
// and the tests fail by name when a step of adding one is left out. Its
// operands name objects by position among what the program knows when the
// step runs (a Ref: the i-th live object, the i-th dead address, or NULL),
// so any subsequence of a program is a program, and shrinking can drop
// steps freely. Decode turns any byte string into a program; Generate
// draws one through the same decoder; Encode writes the bytes of a program
// back, for fuzz seeds; ParseProgram reads a listing (Program.String) back.
//
// The byte encoding is stable: each call owns a fixed range of op bytes,
// and bytes from 240 up are reserved for the calls of later layers (layer
// 3 took 192 to 239), so a call added there leaves every saved program's
// meaning alone. fuzz/ keeps
// each FuzzProgram seed beside its readable program and checks that the
// one still decodes to the other.
//
// Run drives the runtime with a program and feeds each event the runtime
// records (its calls and, with effects, its real frees) to a model.Checker.
// After every call it gathers what the properties need: the model's
// violations, whether the runtime refused the call with the model's kind,
// whether it recorded the call it was asked to make, and whether its state
// (live objects and counts, scope records, params) equals the model's:
// after every call and at the end of every run by a fast comparison that
// tests hold to go-cmp's verdict field by field, go-cmp writing the diff
// and having the last word where they differ. After the last step Run
// tears the program down the way a well-behaved caller would (scopes
// exited, params released), calls end, and replays the written trace
// through the model once more.
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
// under either lifetime of the engine (TensorLogic's or PyTorch's).
// RunAutograd runs one, with the autograd faults switched on in the
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
