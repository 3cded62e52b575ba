// Package source checks source programs (package impl/lang): a generated
// program is lowered to runtime calls, which run on impl with the model as
// oracle, while the interpreter says what the program means. Two
// properties:
//
//	source-trace   the recorded trace replays with no violation: a
//	               generated program is correct, so it explains none
//	source-alive   after every statement, the runtime's live objects are
//	               exactly those the interpreter says are alive
//
// The second catches what a trace alone may not: a value kept alive too
// long (a leak before the end) or freed early but never touched again.
//
// Language is their harness.Language: the harness searches with
// lang.Generate, shrinks with Shrink (lang.Shrink, a smaller program that
// still fails with the faults and passes without them), and saves a
// failing program beside its trace as a .tl file, which `tlcheck fuzz
// --replay` checks again. The tests state the properties with rapid and
// gopter and show that every codegen fault, and every runtime fault the
// catalog says source programs catch too, is caught.
package source
