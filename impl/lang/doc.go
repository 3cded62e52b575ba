// Package lang is a small source language for tensor programs, and its
// lowering to the runtime calls of package impl, the way TensorLogic's
// compiler lowers its programs: so that generated programs find bugs of
// the code a compiler emits (a return that leaves scopes open, a block
// that frees its own result) as well as bugs of the runtime.
//
// # Contract
//
// A Program that passes Check is well formed: every name is bound, every
// type matches, break and continue are inside loops, a function with a
// result ends with return, a function calls only functions after it and a
// run executes at most MaxCost statements. For such a program:
//
//   - Interpret says, after each statement in the order the statements
//     run, which objects are alive: those a variable in scope holds,
//     directly or through struct fields (a variable moved from at its last
//     use holds nothing). Objects are numbered in the order they are made.
//   - Lower runs the program's lowering on an impl.Runtime and reports
//     the runtime's live objects at the same points, numbered the same way.
//     With a correct runtime and no codegen fault on, the two agree after
//     every statement and the recorded trace replays with no violation;
//     package properties checks both, with the model as oracle. The
//     lowering's rules are listed in lower.go; each codegen fault
//     (faultrows.go, Engine impl.EngineSource), on in the runtime
//     (Runtime.HasFault), breaks one.
//   - Generate makes only well-formed programs, from any stream of
//     choices (Bytes turns a fuzzer's input into one); Shrink makes a
//     failing program smaller on the source; String prints it as source.
//
// An ill-formed program is an error from Check, Interpret and Lower,
// naming the function and statement; nothing panics on one.
// A program the runtime has no room for is input, not a bug: a tensor
// over MaxTensor bytes (the arena's address space) is ill-formed, and
// tensors that fit one by one but not together make Lower's error
// wrapping impl.ErrOutOfMemory, naming the function and statement.
//
// # The language
//
// Values are tensors (heap objects made by tensor operations, computed in
// the arena slots where the function's tensor variables keep their data
// from statement to statement) and structs of tensors; a struct with no
// fields is zero-sized, and NULL. A struct a function returns is copied
// into its caller's destination, where it lives by value, holding the
// same fields, and is no new object. Parameters are borrowed. Operands are
// variables, so every temporary is named by a let:
//
//	struct Pair { f0: Tensor, f1: Tensor }
//	fn main() {
//	    let a = zeros(16);
//	    let p = Pair { f0: a, f1: a };
//	    for i0 in 0..3 {
//	        let t = add(a);
//	        if i0 == 1 { break; }
//	    }
//	    let x = if true { let y = zeros(16); y } else { a };
//	    let c = p.first(&x);
//	}
//	impl Pair fn first(&self, x: &Tensor) -> Tensor {
//	    let f = self.f0;
//	    return f;
//	}
//
// The package imports impl, never the model: properties, fuzz and the
// command bring the two together.
package lang
