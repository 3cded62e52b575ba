package properties

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
	ag "github.com/tlcheck/tlcheck/properties/autograd"
	"github.com/tlcheck/tlcheck/properties/harness"
	"github.com/tlcheck/tlcheck/traces"
)

// AutogradFailure is a breach of the autograd property, found by one of
// its oracles:
//
//	RuntimeUse  the engine never misuses the runtime (no *impl.Error)
//	Versions    an in-place op bumps every alias of its storage by one, and nothing else
//	ClearGrads  after ClearGrads no leaf keeps a grad
//	Held        PyTorch's lifetime: a tensor the program holds (not dropped, its scope open) is alive
//	Model       the recorded trace, replayed by the model, has no violation
type AutogradFailure struct {
	Property string
	Kind     traces.Kind // Model: the kind of the first violation
	Step     int         // the step that broke it; the program's length for Model
	Message  string
	Trace    []traces.Event // the run's trace, up to the breach
	// poolSizes is the pool's length before each step run, for the
	// shrinker to re-point operands when it drops a step that made a
	// tensor (see repoint).
	poolSizes []int
}

func (f *AutogradFailure) Error() string {
	return fmt.Sprintf("autograd property %s broken at step %d: %s", f.Property, f.Step, f.Message)
}

// Events is the length of the failure's trace.
func (f *AutogradFailure) Events() int { return len(f.Trace) }

// WriteTrace writes the failure's trace as a file `tlcheck replay` reads.
func (f *AutogradFailure) WriteTrace(w io.Writer) error {
	return writeTrace(w, impl.Header(), f.Trace)
}

// AutogradProgram is a generated autograd program: steps over a pool of
// tensors, each naming its operands by index into the pool. Any
// subsequence of a program is a program, so shrinking drops steps freely.
// A checkpointed program runs with autograd.Config.Checkpoint and starts
// from two leaves, x that requires grad and c that does not, and y = x*c.
// A program runs under one lifetime (autograd.Config.Lifetime); its
// free_graph steps drop a tensor under PyTorch's (see runAutograd).
type AutogradProgram struct {
	steps    []ag.Step
	ckpt     bool
	lifetime autograd.Lifetime
}

// Len is the program's number of steps.
func (p AutogradProgram) Len() int { return len(p.steps) }

// String lists the steps, one a line: kind(a,b,constant).
func (p AutogradProgram) String() string {
	var b strings.Builder
	if p.lifetime != autograd.LifetimeTensorLogic {
		fmt.Fprintf(&b, "lifetime: %v\n", p.lifetime)
	}
	if p.ckpt {
		b.WriteString("checkpoint: x=leaf(requires grad), c=leaf, y=x*c\n")
	}
	for _, s := range p.steps {
		b.WriteString(s.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// GenerateAutograd draws a program of at least 1 and about 30 steps at
// most, checkpointed or not, under either lifetime: the autograd
// language's ag.GenerateSteps (steps, and one draw in eight an episode).
func GenerateAutograd(r *rand.Rand) AutogradProgram {
	steps, ckpt, lt := ag.GenerateSteps(r)
	return AutogradProgram{steps, ckpt, autograd.Lifetime(lt)}
}

// RunAutograd runs p on an autograd engine over a runtime with faults on
// (none: the correct one) and returns the first breach, or nil. faults
// must be ones impl.Config takes (see impl.Catalog): another engine's
// fault panics, as impl.New does.
func RunAutograd(p AutogradProgram, faults []impl.Fault) *AutogradFailure {
	return runAutograd(faults, p.ckpt, p.lifetime, p.steps)
}

// SearchAutograd runs generated programs until one breaks the property or
// more says stop, and returns it, its failure and the programs run.
func SearchAutograd(faults []impl.Fault, seed uint64, more func(n int) bool) (AutogradProgram, *AutogradFailure, int) {
	p, f, n := harness.Search(AutogradLanguage(faults), seed, more)
	if f == nil {
		return p, nil, n
	}
	return p, f.Detail.(*AutogradFailure), n
}

// ShrinkAutograd removes steps from a failing program, and lowers
// operands, while it still breaks the same property (for Model, with the same
// kind of violation): the autograd language's ag.ShrinkSteps. It returns
// the smallest program found with its failure; nil if p does not fail. A
// checkpointed program becomes a plain one whose first steps make its x,
// c and y (ag.CheckpointPrelude), if that fails the same way.
func ShrinkAutograd(p AutogradProgram, faults []impl.Fault) (AutogradProgram, *AutogradFailure) {
	f := RunAutograd(p, faults)
	if f == nil {
		return p, nil
	}
	same := func(g *AutogradFailure) bool { return g != nil && g.Property == f.Property && g.Kind == f.Kind }
	steps := p.steps[:min(len(p.steps), f.Step+1)]
	if g := runAutograd(faults, p.ckpt, p.lifetime, steps); same(g) {
		f = g
	} else {
		steps = p.steps
	}
	steps = ag.ShrinkSteps(steps, f.poolSizes, func(q []ag.Step) ([]int, bool) {
		g := runAutograd(faults, p.ckpt, p.lifetime, q)
		if !same(g) {
			return nil, false
		}
		f = g
		return g.poolSizes, true
	})
	if p.ckpt {
		// A checkpointed program's start, written as steps of a plain
		// one: if it fails the same way, shrink that, so that what the
		// failure needs is all in steps.
		if q := (AutogradProgram{append(ag.CheckpointPrelude(), steps...), false, p.lifetime}); same(RunAutograd(q, faults)) {
			if small, g := ShrinkAutograd(q, faults); same(g) {
				return small, g
			}
		}
	}
	return AutogradProgram{steps, p.ckpt, p.lifetime}, f
}

// RunAutogradBytes decodes data as an autograd program (the autograd
// language's ag.DecodeSteps: four bytes a step, the kind, two operands, a
// constant; a kind byte from ag.EpisodeByte up an episode; a partial step
// at the end makes the program checkpointed), runs it on an engine with
// faults on (none: the correct one) under each lifetime in turn,
// TensorLogic's then PyTorch's, and returns the first breach the oracles
// find: FuzzAutogradProgram's property.
func RunAutogradBytes(data []byte, faults ...impl.Fault) error {
	prog, ckpt := ag.DecodeSteps(data)
	for _, lt := range []autograd.Lifetime{autograd.LifetimeTensorLogic, autograd.LifetimePyTorch} {
		if f := runAutograd(faults, ckpt, lt, prog); f != nil {
			return f
		}
	}
	return nil
}
