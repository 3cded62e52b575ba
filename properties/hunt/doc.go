// Package hunt hunts the faults of the runtime's catalog (impl.Catalog),
// each with its own engine, and says how small a counterexample each
// engine found: the proof that tlcheck's checks have the power they
// claim, which `tlcheck selftest` prints and reports/detection.md keeps.
//
// Fault switches one fault on alone and searches, with the engine its
// row names (impl.FaultInfo.Engine), for a run that breaks a property
// within Options.Budget; the failing run is shrunk, and the fault counts
// as caught only if the shrunk one passes without it. The engines:
//
//   - program: flat programs of runtime calls (package properties), the
//     reference model as oracle; the counterexample is the shrunk run's
//     trace, in events.
//   - source: source programs of impl/lang, lowered by the codegen rules,
//     with the interpreter as a second oracle; the counterexample is the
//     shrunk source program, in statements.
//   - pool: pool programs on the allocators of impl/gpu, checked by the
//     pool property; the counterexample is the shrunk pool program, in
//     calls.
//   - registry: concurrent histories of impl/registry checked for
//     linearizability (impl/registry/lincheck); the counterexample is the
//     shortest history found, in calls.
//   - autograd: autograd programs of impl/autograd, with the model, a
//     shadow of the version counters and ClearGrads as oracles; the
//     counterexample is the shrunk program, in steps.
//
// Each engine but the registry's is a program language, a
// harness.Language value (package properties/harness), and is one line of
// the engines list: the harness searches, shrinks and measures for all of
// them alike. The registry's histories are not programs that can be
// shrunk step by step, so it keeps a search of its own.
//
// Control runs the correct runtime, allocators, registry and engine for a
// short while: they must not fail. All does both for every fault, and its
// Report renders as a table, as JSON and as Markdown. Nothing here writes
// a file: the caller decides where a report goes.
//
// WriteCatalog lists the catalog as tlcheck faults prints it, and
// FuzzFault says which faults tlcheck fuzz may switch on (the program and
// source engines'), with an error that lists them (catalog.go).
package hunt
