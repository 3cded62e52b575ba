package properties

// ShrinkWith shrinks p by Shrink's passes, with fails in place of a run
// against package impl: it is how a runtime that is not impl's (package
// drive drives one in another process) shrinks a failing program with the
// same delta debugging. fails runs a candidate and reports whether it
// fails the way p does, returning the candidate as run: its refs
// canonical, as Result.Calls holds the steps (a run of the candidate
// against impl's Runtime without faults makes them so), so that counting
// indices down walks distinct programs. ShrinkWith returns the smallest
// failing program found; p itself if no candidate failed. It does not run
// p, and does not cut the steps after the failing one: the caller knows
// where that is.
func ShrinkWith(p Program, fails func(Program) (Program, bool)) Program {
	sh := shrinker{fails: fails, best: p.clone()}
	sh.passes()
	return sh.best
}
