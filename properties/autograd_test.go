package properties

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
	"github.com/tlcheck/tlcheck/model"
	ag "github.com/tlcheck/tlcheck/properties/autograd"
	"github.com/tlcheck/tlcheck/traces"
)

// rapidAutogradProperty: every generated program passes the autograd
// property on an engine over a runtime with faults on.
func rapidAutogradProperty(faults []impl.Fault) func(*rapid.T) {
	return func(t *rapid.T) {
		// A chunk is one step, or one in four an episode (ag.Episode).
		chunks := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) []ag.Step {
			if rapid.IntRange(0, 3).Draw(t, "episode") == 0 {
				return ag.Episode(rapid.IntRange(0, 63).Draw(t, "p"), rapid.IntRange(0, 63).Draw(t, "q"),
					rapid.IntRange(0, 63).Draw(t, "r"), float64(rapid.IntRange(-3, 3).Draw(t, "f"))/2)
			}
			return []ag.Step{{
				Kind: rapid.IntRange(0, len(ag.Kinds)-1).Draw(t, "kind"),
				A:    rapid.IntRange(0, ag.Operands-1).Draw(t, "a"),
				B:    rapid.IntRange(0, ag.Operands-1).Draw(t, "b"),
				F:    float64(rapid.IntRange(-3, 3).Draw(t, "f")) / 2,
			}}
		}), 1, 40).Draw(t, "prog")
		ckpt := rapid.Bool().Draw(t, "checkpoint")
		lt := autograd.Lifetime(rapid.IntRange(0, 1).Draw(t, "lifetime"))
		if f := runAutograd(faults, ckpt, lt, slices.Concat(chunks...)); f != nil {
			t.Fatal(f)
		}
	}
}

// TestAutogradRapid: every generated program is clean on the correct engine.
func TestAutogradRapid(t *testing.T) {
	rapid.Check(t, rapidAutogradProperty(nil))
}

// TestAutogradFaultsCaught: for every fault of impl.Catalog whose Engine
// is impl.EngineAutograd, the rapid and the gopter property fail,
// SearchAutograd finds a breach within the budget, ShrinkAutograd brings it down to a few steps, and the shrunk
// program passes on the correct engine: the fault is to blame. The
// programs the search ran pass on the correct engine too.
func TestAutogradFaultsCaught(t *testing.T) {
	setFlag(t, "rapid.nofailfile", "true") // failures here are expected: keep testdata clean
	setFlag(t, "rapid.seed", rapidSeed)
	setFlag(t, "rapid.checks", rapidChecks)
	setFlag(t, "rapid.shrinktime", "100ms")
	const budget, maxSteps = 3000, 8
	n := 0
	for _, fi := range impl.Catalog() {
		if fi.Engine != impl.EngineAutograd {
			continue // another engine's fault: autograd programs cannot reach it
		}
		n++
		t.Run(string(fi.Name), func(t *testing.T) {
			faults := []impl.Fault{fi.Name}
			t.Run("rapid", func(t *testing.T) {
				tb := &silentTB{name: t.Name()}
				rapid.Check(tb, rapidAutogradProperty(faults))
				if !tb.Failed() {
					t.Errorf("fault %s escaped the rapid autograd property (%s checks)\ntrigger: %s", fi.Name, rapidChecks, fi.Trigger)
				}
			})
			t.Run("gopter", func(t *testing.T) {
				if ok, _ := gopterAutogradRun(faults, 1, gopterTests); ok {
					t.Errorf("fault %s escaped the gopter autograd property (%d runs)\ntrigger: %s", fi.Name, gopterTests, fi.Trigger)
				}
			})
			p, f, runs := SearchAutograd(faults, 1, func(n int) bool { return n < budget })
			if f == nil {
				t.Fatalf("fault %s escaped %d autograd programs\ntrigger: %s", fi.Name, runs, fi.Trigger)
			}
			if g := RunAutograd(p, nil); g != nil {
				t.Fatalf("the correct engine fails %v: %v", p, g)
			}
			small, sf := ShrinkAutograd(p, faults)
			if sf == nil {
				t.Fatalf("the failing program no longer fails when shrunk:\n%v", p)
			}
			if g := RunAutograd(small, nil); g != nil {
				t.Errorf("the shrunk program fails without the fault too (%v): it shows another bug", g)
			}
			if small.Len() > maxSteps {
				t.Errorf("shrunk to %d steps, want at most %d:\n%v", small.Len(), maxSteps, small)
			}
			t.Logf("caught after %d programs; shrunk %d steps to %d, %d events: %v\n%v", runs, p.Len(), small.Len(), sf.Events(), sf, small)
		})
	}
	if n == 0 {
		t.Fatal("impl.Catalog has no autograd fault")
	}
}

// TestGradientsFiniteDifferences: on random expressions of one-element
// leaves, backward's gradient equals the central difference
// (f(x+h)-f(x-h))/2h with h = 1e-6. Its error is the truncation,
// h²·f”'/6 ≈ 1e-12·f”', plus rounding, ε·|f|/h ≈ 2e-16·|f|/1e-6 ≈
// 2e-10·|f|: a relative tolerance of 1e-5 (absolute below 1e-5) leaves
// room for third derivatives. Leaves lie in [0.5, 2] and the ops are
// guarded (see expression); products and squares can grow a value to
// 2^256 in eight ops, but for x^n both error terms stay as small against
// the derivative n·x^(n-1): rounding about 2e-10·x/n, truncation about
// 1e-12·n²/x², at most 7e-8 for n = 256.
func TestGradientsFiniteDifferences(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := 3
		x0 := make([]float64, n)
		for i := range x0 {
			x0[i] = rapid.Float64Range(0.5, 2).Draw(t, "x")
		}
		ops := rapid.SliceOfN(rapid.IntRange(0, expressionOps-1), 1, 8).Draw(t, "ops")
		args := rapid.SliceOfN(rapid.IntRange(0, 63), len(ops), len(ops)).Draw(t, "args")
		eval := func(xs []float64, grads bool) (float64, []float64) {
			_, leaves, _, y := lossOf(t, nil, autograd.Config{}, xs, ops, args)
			f, _ := y.Item()
			if !grads {
				return f, nil
			}
			if !y.RequiresGrad() {
				return f, make([]float64, len(xs))
			}
			if err := y.Backward(false); err != nil {
				t.Fatal(err)
			}
			return f, leafGrads(leaves)
		}
		_, g := eval(x0, true)
		const h = 1e-6
		for i := range x0 {
			xp := append([]float64{}, x0...)
			xm := append([]float64{}, x0...)
			xp[i] += h
			xm[i] -= h
			fp, _ := eval(xp, false)
			fm, _ := eval(xm, false)
			fd := (fp - fm) / (2 * h)
			if math.Abs(fd-g[i]) > 1e-5*max(1, math.Abs(fd)) {
				t.Fatalf("d/dx%d: backward %g, central difference %g", i, g[i], fd)
			}
		}
	})
}

// TestAutogradSavedModified: an in-place op through a view of a saved
// tensor. The correct engine refuses the backward in PyTorch's words and
// unpacks nothing, so the model finds nothing; with a view that keeps a
// version counter of its own the engine unpacks the modified tensor, and
// the model, counting bumps by the storage's identity, reports
// saved-modified.
func TestAutogradSavedModified(t *testing.T) {
	for _, c := range []struct {
		faults  []impl.Fault
		refused bool
		kind    traces.Kind
	}{
		{nil, true, ""},
		{[]impl.Fault{autograd.FaultAutogradViewOwnVersion}, false, traces.SavedModified},
	} {
		e, rec := recordedEngine(t, c.faults, autograd.Config{})
		must := mustTensor(t)
		_ = e.ScopeEnter()
		x := must(e.Leaf([]int{2}, []float64{1, 2}, false))
		w := must(e.Leaf([]int{2}, []float64{3, 4}, true))
		v := must(x.Reshape(2))
		y := must(w.Mul(x)) // saves x
		if err := v.AddInPlace(must(e.Scalar(1)), 1); err != nil {
			t.Fatal(err)
		}
		s := must(y.Sum())
		err := s.Backward(false)
		if refused := err != nil; refused != c.refused {
			t.Errorf("faults %v: backward refused %t (%v), want %t", c.faults, refused, err, c.refused)
		}
		if err != nil {
			_ = e.FreeGraph(s)
		}
		_ = e.ScopeExit()
		_ = e.End()
		wantOneKind(t, c.faults, modelReplay(t, rec), c.kind, "")
	}
}

// TestAutogradTrainingClean: a training loop (forward, backward, an
// update of the leaves under NoGrad, ClearGrads, the epoch's scope
// closed) replays clean: the updates bump the leaves with kind "no_grad",
// which the model allows on a leaf that requires grad.
func TestAutogradTrainingClean(t *testing.T) {
	e, rec := recordedEngine(t, nil, autograd.Config{})
	must := mustTensor(t)
	_ = e.ScopeEnter()
	w := must(e.Leaf([]int{2, 2}, []float64{0.1, -0.2, 0.3, 0.4}, true))
	x := must(e.Leaf([]int{1, 2}, []float64{1, 2}, false))
	for range 20 {
		if err := e.ScopeEnter(); err != nil {
			t.Fatal(err)
		}
		loss := must(must(must(x.Matmul(w)).Tanh()).Sum())
		if err := loss.Backward(false); err != nil {
			t.Fatal(err)
		}
		if err := e.NoGrad(func() error { return w.AddInPlace(w.Grad(), -0.1) }); err != nil {
			t.Fatal(err)
		}
		if err := first(e.ClearGrads(), e.ScopeExit()); err != nil {
			t.Fatal(err)
		}
	}
	if err := first(e.ScopeExit(), e.End()); err != nil {
		t.Fatal(err)
	}
	if rep := modelReplay(t, rec); len(rep.Violations) != 0 || !rep.Complete {
		t.Errorf("violations %v, complete %t", rep.Violations, rep.Complete)
	}
}

func first(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// gopterAutogradRun states the autograd property in gopter's terms, as a
// second, independent engine, with faults on in the runtime; it reports
// whether the property held for tests programs.
func gopterAutogradRun(faults []impl.Fault, seed int64, tests int) (bool, *gopter.TestResult) {
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = tests
	props := gopter.NewProperties(params)
	step := gopter.CombineGens(gen.IntRange(0, len(ag.Kinds)-1), gen.IntRange(0, ag.Operands-1), gen.IntRange(0, ag.Operands-1), gen.IntRange(-3, 3)).
		Map(func(v []interface{}) []ag.Step {
			return []ag.Step{{Kind: v[0].(int), A: v[1].(int), B: v[2].(int), F: float64(v[3].(int)) / 2}}
		})
	episode := gopter.CombineGens(gen.IntRange(0, 63), gen.IntRange(0, 63), gen.IntRange(0, 63), gen.IntRange(-3, 3)).
		Map(func(v []interface{}) []ag.Step {
			return ag.Episode(v[0].(int), v[1].(int), v[2].(int), float64(v[3].(int))/2)
		})
	chunk := gen.Weighted([]gen.WeightedGen{{Weight: 7, Gen: step}, {Weight: 1, Gen: episode}})
	props.Property("autograd programs replay clean", prop.ForAll(func(ckpt, pytorch bool, chunks [][]ag.Step) string {
		lt := autograd.LifetimeTensorLogic
		if pytorch {
			lt = autograd.LifetimePyTorch
		}
		if f := runAutograd(faults, ckpt, lt, slices.Concat(chunks...)); f != nil {
			return f.Error()
		}
		return ""
	}, gen.Bool(), gen.Bool(), gen.SliceOf(chunk)))
	rep := &lastResult{}
	ok := props.Run(rep)
	return ok, rep.result
}

// TestAutogradGopter: every generated autograd program is clean on the
// correct engine.
func TestAutogradGopter(t *testing.T) {
	if ok, res := gopterAutogradRun(nil, 1, 200); !ok {
		t.Fatalf("the correct engine fails the gopter property: %v", res)
	}
}

// TestAutogradCheckpointReplays: checkpoint scenarios replayed by the
// model. With checkpoints on, a saved tensor written in place after its
// save is restored from its snapshot, or recomputed when written under
// NoGrad, and the trace is clean; each checkpoint fault shows as the
// violation the model finds for it.
func TestAutogradCheckpointReplays(t *testing.T) {
	for _, c := range []struct {
		faults []impl.Fault
		kind   traces.Kind
		msg    string
	}{
		{nil, "", ""},
		{[]impl.Fault{autograd.FaultAutogradSnapshotTableNeverCleared}, traces.Leak, "is a snapshot of saved tensor"},
		{[]impl.Fault{autograd.FaultAutogradRestoreWrongVersion}, traces.SavedModified, "restore: saved tensor"},
	} {
		e, rec := recordedEngine(t, c.faults, autograd.Config{Checkpoint: true})
		must := mustTensor(t)
		_ = e.ScopeEnter()
		a := must(e.Leaf([]int{2}, []float64{0.5, 1}, true))
		h := must(a.Exp()) // saves h at version 0
		if err := e.NoGrad(func() error { return h.MulInPlace(2) }); err != nil {
			t.Fatal(err)
		}
		k := must(e.Leaf([]int{2}, []float64{1, 1}, true))
		y := must(h.Mul(k)) // saves h at version 1
		if err := h.AddInPlace(must(e.Scalar(1)), 1); err != nil {
			t.Fatal(err) // snapshot of h at version 1
		}
		root := must(must(y.Add(h)).Sum())
		if err := first(root.Backward(true), e.FreeGraph(root), e.ScopeExit(), e.End()); err != nil {
			t.Fatal(err)
		}
		wantOneKind(t, c.faults, modelReplay(t, rec), c.kind, c.msg)
	}
}

// TestAutogradDeadLeafGrad: a leaf whose scope freed it while a graph
// still led to it gets no grad at backward; the correct engine once made
// one, owned by the dead leaf, which the model reported as a leak at end
// (found by gopter at seed 139 in 11 steps; ShrinkAutograd, re-pointing operands, brings it to these 6).
func TestAutogradDeadLeafGrad(t *testing.T) {
	kind := func(name string) int {
		k, ok := ag.KindOf(name)
		if !ok {
			t.Fatalf("no step kind %q", name)
		}
		return k
	}
	prog := []ag.Step{
		{Kind: kind("leaf"), F: 1.5},
		{Kind: kind("scope_enter"), F: -1.5},
		{Kind: kind("leaf"), F: 0.5},
		{Kind: kind("sum"), A: 1, F: -1},
		{Kind: kind("scope_exit"), F: 1},
		{Kind: kind("backward"), A: 2, F: -1},
	}
	if f := runAutograd(nil, false, autograd.LifetimeTensorLogic, prog); f != nil {
		t.Fatal(f)
	}
}

// recordedEngine returns an autograd engine with cfg over a runtime with
// faults on, both recording into one trace.
func recordedEngine(t *testing.T, faults []impl.Fault, cfg autograd.Config) (*autograd.Engine, *impl.Recording) {
	t.Helper()
	rec := new(impl.Recording)
	cfg.Record = rec.Record
	e, err := autograd.New(impl.New(impl.Config{Faults: faults, Record: rec.Record}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e, rec
}

// fataler is what the helpers need of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

// mustTensor returns what an op returned, failing t on its error.
func mustTensor(t fataler) func(*autograd.Tensor, error) *autograd.Tensor {
	return func(v *autograd.Tensor, err error) *autograd.Tensor {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// lossOf builds, on an engine with cfg over a runtime with faults on, a
// one-element leaf that requires grad for each of xs, the expression of
// ops and args over them (see expression), and the sum of its last
// tensor: the loss y. vals holds the leaves, then each op's tensor.
func lossOf(t fataler, faults []impl.Fault, cfg autograd.Config, xs []float64, ops, args []int) (e *autograd.Engine, leaves, vals []*autograd.Tensor, y *autograd.Tensor) {
	t.Helper()
	e, err := autograd.New(impl.New(impl.Config{Faults: faults}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	must := mustTensor(t)
	_ = e.ScopeEnter()
	for _, x := range xs {
		leaves = append(leaves, must(e.Leaf([]int{1}, []float64{x}, true)))
	}
	vals = expression(e, must, slices.Clone(leaves), ops, args)
	return e, leaves, vals, must(vals[len(vals)-1].Sum())
}

// leafGrads returns each one-element leaf's grad, 0 for none.
func leafGrads(leaves []*autograd.Tensor) []float64 {
	g := make([]float64, len(leaves))
	for i, l := range leaves {
		if l.Grad() != nil {
			gv, _ := l.Grad().Values()
			g[i] = gv[0]
		}
	}
	return g
}

// expressionOps is how many ops expression knows.
const expressionOps = 11

// expression appends to vals, for each of ops, a tensor computed from one
// or two earlier ones that args picks (args[k]%len and args[k]/8%len).
// The ops keep values bounded and away from poles and kinks, so that a
// central difference approximates their derivative; most of them save a
// tensor for backward, an input or their output.
func expression(e *autograd.Engine, must func(*autograd.Tensor, error) *autograd.Tensor, vals []*autograd.Tensor, ops, args []int) []*autograd.Tensor {
	for k, op := range ops {
		a, b := vals[args[k]%len(vals)], vals[(args[k]/8)%len(vals)]
		var v *autograd.Tensor
		switch op {
		case 0:
			v = must(a.Add(b)) // saves nothing
		case 1:
			v = must(a.Sub(b))
		case 2:
			v = must(must(a.Tanh()).Mul(b)) // tanh saves its output, mul its inputs
		case 3: // a / (1 + b²): never divides by zero
			v = must(a.Div(must(must(b.Pow(2)).Add(must(e.Scalar(1))))))
		case 4:
			v = must(must(a.Tanh()).Exp())
		case 5: // log(1 + a²)
			v = must(must(must(a.Pow(2)).Add(must(e.Scalar(1)))).Log())
		case 6:
			v = must(a.Tanh())
		case 7:
			v = must(a.Neg())
		case 8: // relu, kept away from its kink
			v = must(must(a.Add(must(e.Scalar(10)))).Relu())
		case 9:
			v = must(a.Mul(b))
		case 10:
			v = must(a.Pow(2)) // saves its input
		}
		vals = append(vals, v)
	}
	return vals
}

// modelReplay is the model's report on what rec recorded.
func modelReplay(t *testing.T, rec *impl.Recording) traces.Report {
	t.Helper()
	rep, err := model.Replay(rec.Source())
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// wantOneKind fails t unless rep has no violation (kind "") or exactly
// one, of kind, each with msg in its message.
func wantOneKind(t *testing.T, faults []impl.Fault, rep traces.Report, kind traces.Kind, msg string) {
	t.Helper()
	var kinds []traces.Kind
	for _, v := range rep.Violations {
		kinds = append(kinds, v.Kind)
		if !strings.Contains(v.Message, msg) {
			t.Errorf("faults %v: %s: %s, want a message with %q", faults, v.Kind, v.Message, msg)
		}
	}
	if kind == "" && len(kinds) != 0 || kind != "" && (len(kinds) != 1 || kinds[0] != kind) {
		t.Errorf("faults %v: the model reports %v, want %q", faults, kinds, kind)
	}
}

// TestAutogradEpisodes: the first episode is issue 17's sequence (a
// leaf, exp, a NoGrad in-place op on the result, a product with another
// leaf, its sum, backward twice with retain_graph), and every episode of
// every kind runs clean on the correct engine, checkpointed or not, under
// either lifetime. An engine that
// records the counter's version after a recompute makes the second
// backward unpack the product's saved h, which the model reports as
// saved-modified: the generators, which draw episodes, find it within a
// few programs (see the commit that added episodes).
func TestAutogradEpisodes(t *testing.T) {
	var kinds []string
	for _, s := range ag.Episode(0, 0, 0, 1) {
		kinds = append(kinds, ag.Kinds[s.Kind].Name)
	}
	want := []string{"leaf", "ckpt-exp", "mul_-nograd", "leaf", "mul", "backward-retain", "backward-retain"}
	if !slices.Equal(kinds, want) {
		t.Errorf("episode 0: %v, want %v", kinds, want)
	}
	for p := range 4 * ag.Episodes {
		for q := range 25 {
			for r := range 8 {
				for _, ckpt := range []bool{false, true} {
					for _, lt := range []autograd.Lifetime{autograd.LifetimeTensorLogic, autograd.LifetimePyTorch} {
						if f := runAutograd(nil, ckpt, lt, ag.Episode(p, q, r, 1.5)); f != nil {
							t.Fatalf("episode (%d,%d,%d), checkpointed %v, lifetime %v: %v", p, q, r, ckpt, lt, f)
						}
					}
				}
			}
		}
	}
}

// TestAutogradRunsEveryOp: the runner makes every operation the autograd
// language runs in process, and no other.
func TestAutogradRunsEveryOp(t *testing.T) {
	for _, op := range ag.Ops(ag.InProcess) {
		if agOps[op] == nil {
			t.Errorf("the runner has no way to make %s, which the autograd language runs in process", op)
		}
	}
	for op := range agOps {
		if r, ok := ag.Lookup(op); !ok || r.Where&ag.InProcess == 0 {
			t.Errorf("the runner makes %s, which the autograd language does not run in process", op)
		}
	}
}
