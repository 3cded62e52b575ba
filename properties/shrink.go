package properties

import (
	"slices"

	"github.com/tlcheck/tlcheck/impl"
)

// maxShrinkRuns bounds the runs one Shrink may make. Delta debugging a
// program of MaxSteps steps stays far below it; the bound only guarantees
// that shrinking ends.
const maxShrinkRuns = 20000

// Shrink returns the smallest program it can find that fails like p does
// against cfg (the same property breaks, the same way, at the same op),
// with that program's failure, whose trace is the counterexample to write.
// If p does not fail, it returns p and nil.
//
// It is delta debugging over steps: first the steps after the failing call
// go, then chunks of halving size down to single steps (a step that made
// an object also goes with the later refs shifted down), then pairs of
// steps apart, then operands are simplified (ref indices counted down,
// fields dropped, sizes to 16, names to the first); the passes repeat
// until none makes progress. Operands name objects by position among what
// is alive, so every candidate is a meaningful program. When p's failure
// shows in its trace (Result.Visible), candidates must show theirs too: a
// counterexample is a trace that `tlcheck replay` rejects.
func Shrink(p Program, cfg impl.Config) (Program, *Failure) {
	_, f := Run(p, cfg)
	if f == nil {
		return p, nil
	}
	sh := shrinker{cfg: cfg, sig: f.sig, visible: f.Result.Visible(), best: p.clone(), failure: f}
	sh.cut(f.Call + 1)
	sh.passes()
	return sh.best, sh.failure
}

// passes runs the shrinking passes until none makes progress.
func (sh *shrinker) passes() {
	for progress := true; progress && sh.runs < maxShrinkRuns; {
		progress = sh.dropChunks()
		if sh.dropPairs() {
			progress = true
		}
		if sh.simplify() {
			progress = true
		}
	}
}

type shrinker struct {
	cfg     impl.Config
	sig     string
	visible bool
	best    Program
	failure *Failure
	runs    int

	// fails, where set, judges candidates in place of a Run against cfg
	// (ShrinkWith).
	fails func(Program) (Program, bool)
}

// try runs candidate c and keeps it if it fails the same way.
func (sh *shrinker) try(c Program) bool {
	if sh.runs >= maxShrinkRuns {
		return false
	}
	sh.runs++
	if sh.fails != nil {
		made, ok := sh.fails(c)
		if ok {
			sh.best = made
		}
		return ok
	}
	r, f := Run(c, sh.cfg)
	if f == nil || f.sig != sh.sig || sh.visible && !r.Visible() {
		return false
	}
	// Keep the steps as made: their refs canonical, the same run with the
	// smallest indices.
	for i := range c.Steps {
		c.Steps[i] = r.Calls[i].Step
	}
	sh.best, sh.failure = c, f
	return true
}

// cut drops every step from n on.
func (sh *shrinker) cut(n int) {
	if n < len(sh.best.Steps) {
		sh.try(Program{Steps: slices.Clone(sh.best.Steps[:n])})
	}
}

// dropChunks removes runs of steps, from half the program down to single
// steps, and reports whether anything went.
func (sh *shrinker) dropChunks() bool {
	progress := false
	for size := len(sh.best.Steps) / 2; size >= 1; size /= 2 {
		for i := 0; i+size <= len(sh.best.Steps); {
			c := sh.best.clone()
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
	c := callOf(sh.best.Steps[i].Op)
	return c != nil && c.creates()
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
			c := sh.best.clone()
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
				c := sh.best.clone()
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
	c := callOf(s.Op)
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
