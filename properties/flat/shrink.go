package flat

import "slices"

// MaxShrinkRuns bounds the candidates one ShrinkWith may judge. Delta
// debugging a program of MaxSteps steps stays far below it; the bound only
// guarantees that shrinking ends.
const MaxShrinkRuns = 20000

// ShrinkWith shrinks p by delta debugging, with fails judging each
// candidate: fails runs a candidate and reports whether it fails the way p
// does, returning the candidate as run: its refs canonical (as a run
// resolves them: the same choice with the smallest index), so that
// counting indices down walks distinct programs. ShrinkWith returns the
// smallest failing program found; p itself if no candidate failed. It
// does not run p, and does not cut the steps after the failing one: the
// caller knows where that is.
//
// The passes: chunks of steps of halving size down to single steps go (a
// step that made an object also goes with the later refs shifted down),
// then pairs of steps apart, then operands are simplified (ref indices
// counted down, fields dropped, sizes to 16, names to the first); the
// passes repeat until none makes progress or MaxShrinkRuns candidates
// were judged. Operands name objects by position among what is alive, so
// every candidate is a meaningful program. Package properties shrinks
// against impl's runtime with it; package drive against a runtime in
// another process.
func ShrinkWith(p Program, fails func(Program) (Program, bool)) Program {
	sh := shrinker{fails: fails, best: p.Clone()}
	sh.passes()
	return sh.best
}

// shrinker is one ShrinkWith: the best program so far and the runs made.
type shrinker struct {
	best  Program
	runs  int
	fails func(Program) (Program, bool)
}

// passes runs the shrinking passes until none makes progress.
func (sh *shrinker) passes() {
	for progress := true; progress && sh.runs < MaxShrinkRuns; {
		progress = sh.dropChunks()
		if sh.dropPairs() {
			progress = true
		}
		if sh.simplify() {
			progress = true
		}
	}
}

// try judges candidate c and keeps it, as run, if it fails the same way.
func (sh *shrinker) try(c Program) bool {
	if sh.runs >= MaxShrinkRuns {
		return false
	}
	sh.runs++
	made, ok := sh.fails(c)
	if ok {
		sh.best = made
	}
	return ok
}

// dropChunks removes runs of steps, from half the program down to single
// steps, and reports whether anything went.
func (sh *shrinker) dropChunks() bool {
	progress := false
	for size := len(sh.best.Steps) / 2; size >= 1; size /= 2 {
		for i := 0; i+size <= len(sh.best.Steps); {
			c := sh.best.Clone()
			c.Steps = slices.Delete(c.Steps, i, i+size)
			if sh.try(c) || size == 1 && sh.creates(i) && shifted(c, i, len(c.Steps)) && sh.try(c) {
				progress = true
				continue // the next chunk now starts at i
			}
			i += size
		}
	}
	return progress
}

// creates reports whether step i of the best program made an object.
func (sh *shrinker) creates(i int) bool {
	c := CallOf(sh.best.Steps[i].Op)
	return c != nil && c.Creates()
}

// shifted lowers by one every Live index of steps i up to end, in place,
// and reports whether it changed any: once a step that made an object is
// gone, the objects after it sit one position lower among the live ones,
// and the refs that named them must follow.
func shifted(c Program, i, end int) bool {
	changed := false
	lower := func(r *Ref) {
		if r.Pick == Live && r.Index > 0 {
			r.Index--
			changed = true
		}
	}
	for j := i; j < end; j++ {
		lower(&c.Steps[j].Target)
		for k := range c.Steps[j].Fields {
			lower(&c.Steps[j].Fields[k])
		}
	}
	return changed
}

// pairLimit is the longest program dropPairs works on: it tries every
// pair of steps, which is cheap only once the chunks are gone.
const pairLimit = 24

// dropPairs removes two steps that are not next to each other at once:
// operands name objects by position, so a step can often go only together
// with another that shifts the positions back (an alloc and a release of
// it, say), and removing either alone changes what the rest means. When
// the first step made an object, the steps between the two name the
// objects after it one position lower, and are tried so shifted too.
func (sh *shrinker) dropPairs() bool {
	progress := false
	for i := 0; i < len(sh.best.Steps) && len(sh.best.Steps) <= pairLimit; i++ {
		for j := i + 2; j < len(sh.best.Steps); j++ {
			c := sh.best.Clone()
			c.Steps = slices.Delete(c.Steps, j, j+1)
			c.Steps = slices.Delete(c.Steps, i, i+1)
			if sh.try(c) || sh.creates(i) && shifted(c, i, j-1) && sh.try(c) {
				progress = true
				j = i + 1 // the steps after i moved: start over from i
			}
		}
	}
	return progress
}

// simplify makes each step's operands simpler, one change at a time.
func (sh *shrinker) simplify() bool {
	progress := false
	for i := 0; i < len(sh.best.Steps); i++ {
		// After a kept edit the step has changed: draw its edits afresh.
		for edited := true; edited; {
			edited = false
			for _, edit := range simplifications(sh.best.Steps[i]) {
				c := sh.best.Clone()
				c.Steps[i] = edit
				if sh.try(c) {
					progress, edited = true, true
					break
				}
			}
		}
	}
	return progress
}

// simplifications returns simpler versions of s, each one change away,
// first a plainer call, then operand by operand as its call's row lists
// them: a ref's index one lower
// (refs are canonical, so each lower index is another object), a field
// fewer, the first size, the first name.
func simplifications(s Step) []Step {
	c := CallOf(s.Op)
	if c == nil {
		return nil
	}
	var out []Step
	if c.plainer != nil {
		if p, ok := c.plainer(s); ok {
			out = append(out, p)
		}
	}
	for _, o := range c.operands {
		out = append(out, o.row().simpler(s)...)
	}
	return out
}
