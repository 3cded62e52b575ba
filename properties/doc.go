// Package properties checks the runtime of package impl against the
// reference model of package model, over generated programs: the one place
// (with fuzz/ and cmd/) where the two meet.
//
// A Program is a sequence of layer-2 calls (scope_enter, scope_exit, alloc,
// struct_init, acquire, release, register, unregister, param_register,
// param_release). Its operands name objects by position among what the
// program knows when the step runs (a Ref: the i-th live object, the i-th
// dead address, or NULL), so any subsequence of a program is a program, and
// shrinking can drop steps freely. Decode turns any byte string into a
// program; Generate draws one through the same decoder; Encode writes the
// bytes of a program back, for fuzz seeds.
//
// Run drives the runtime with a program and feeds each event the runtime
// records (its calls and, with effects, its real frees) to a model.Checker.
// After every call it gathers what the properties need: the model's
// violations, whether the runtime refused the call with the model's kind,
// whether it recorded the call it was asked to make, and whether its state
// (live objects and counts, scope records, params) equals the model's,
// compared with go-cmp. After the last step Run tears the program down the
// way a well-behaved caller would (scopes exited, params released), calls
// end, and replays the written trace through the model once more.
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
// commands, and show that every fault of impl.Catalog is caught.
package properties
