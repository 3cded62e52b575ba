package properties

import (
	"slices"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/flat"
)

// maxShrinkRuns bounds the runs one Shrink may make, as flat.ShrinkWith
// bounds its own.
const maxShrinkRuns = flat.MaxShrinkRuns

// Shrink returns the smallest program it can find that fails like p does
// against cfg (the same property breaks, the same way, at the same op),
// with that program's failure, whose trace is the counterexample to write.
// If p does not fail, it returns p and nil.
//
// It is delta debugging over steps: first the steps after the failing call
// go, then flat.ShrinkWith's passes run with a Run against cfg judging
// each candidate. Operands name objects by position among what
// is alive, so every candidate is a meaningful program. When p's failure
// shows in its trace (Result.Visible), candidates must show theirs too: a
// counterexample is a trace that `tlcheck replay` rejects.
func Shrink(p Program, cfg impl.Config) (Program, *Failure) {
	_, f := Run(p, cfg)
	if f == nil {
		return p, nil
	}
	sh := shrinker{cfg: cfg, sig: f.sig, visible: f.Result.Visible(), best: p.Clone(), failure: f}
	sh.cut(f.Call + 1)
	sh.passes()
	return sh.best, sh.failure
}

// passes runs flat.ShrinkWith's passes over the best program, each
// candidate judged by try.
func (sh *shrinker) passes() {
	sh.best = flat.ShrinkWith(sh.best, func(c Program) (Program, bool) {
		if !sh.try(c) {
			return Program{}, false
		}
		return sh.best, true
	})
}

type shrinker struct {
	cfg     impl.Config
	sig     string
	visible bool
	best    Program
	failure *Failure
	runs    int
}

// try runs candidate c and keeps it if it fails the same way.
func (sh *shrinker) try(c Program) bool {
	if sh.runs >= maxShrinkRuns {
		return false
	}
	sh.runs++
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
