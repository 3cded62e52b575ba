// Package harness is the one engine behind every program language of the
// property tests: one way to generate, run, search, shrink and save
// programs, whatever they are made of.
//
// A program language is a value, Language[P], a struct of functions over
// its program type P (porcupine's Model is such a value; rapid has one
// engine for every generator): how to draw a program from a *rand.Rand,
// how to run one with its oracles (the runtime's faults are bound by
// whoever builds the value), how to shrink a failing one, how to measure
// and list it. Its packages under properties/ each export one (the flat
// programs of runtime calls in properties, properties/source,
// properties/pool, the autograd programs); package hunt hunts the fault
// catalog with a list of them, and `tlcheck fuzz` picks one from its flags.
//
// Everything else is written once, here:
//
//	Failure    what broke: the property, its message, the call, the trace
//	Search     programs from a seed until one fails or the budget ends
//	Shrink     the shrinker driver: the language's shrinker or its candidates
//	Save       a counterexample written atomically, never over a file
//	WriteTrace a failing run's trace, the file `tlcheck replay` reads
//	Reproduce  the line that says how to see the failure again (Command
//	           writes any tlcheck command line, quoted for a shell)
//	Fuzz       the fuzz command's pipeline: search, shrink, save, report,
//	           with a Progress line on a terminal
//	Recheck    a saved program run again, as the code is today
//
// Language.Missing names the fields a language lacks; package hunt's
// tests hold every language it hunts to it.
//
// The package imports no runtime (no impl/ package), so that package
// drive, which must not link the runtime it tests, can use it too.
package harness
