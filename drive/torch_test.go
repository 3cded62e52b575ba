package drive

import (
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/internal/longtest"
	"github.com/tlcheck/tlcheck/internal/python"
	"github.com/tlcheck/tlcheck/traces"
)

// torchPython is the interpreter that imports torch, or why none does.
var torchPython = sync.OnceValues(func() (string, string) {
	py, err := python.Find("torch")
	if err != nil {
		return "", err.Error() + "; install python3-torch (apt) to run the PyTorch checks"
	}
	return py, ""
})

// torchConfig is the Config of the PyTorch driver, or a skip.
func torchConfig(t testing.TB, args ...string) Config {
	t.Helper()
	py, why := torchPython()
	if py == "" {
		t.Skip(why)
	}
	cmd := append([]string{py, filepath.Join("..", "examples", "torchdriver", "driver.py")}, args...)
	return Config{Command: cmd, CallTimeout: 20 * time.Second, StartTimeout: 60 * time.Second}
}

// torchPrograms is how many generated programs TestTorchModel compares:
// the 2,000 in CI's long step (package longtest), 300 in the
// quick suite and with -short.
func torchPrograms() int {
	if testing.Short() {
		return 300
	}
	return longtest.Choose(300, 2000)
}

// tally counts what the runs of a comparison showed.
type tally struct {
	programs, calls, refused int
	kinds                    map[traces.Kind]int // refusals the model agreed with, by kind
	diverged                 []string            // the driver's two worlds disagreed: a driver bug
}

func (t *tally) add(res *Result) {
	t.programs++
	t.calls += len(res.TensorCalls)
	for _, o := range res.Outcomes {
		if !o.Refused {
			continue
		}
		t.refused++
		for _, k := range o.Kinds {
			t.kinds[k]++
		}
		if strings.Contains(o.Message, "the two PyTorch worlds diverged") {
			t.diverged = append(t.diverged, o.Message)
		}
	}
}

// compareTorch runs n generated programs of seed on the PyTorch driver,
// each checked against the model, and returns the tally and the first
// failure, shrunk.
func compareTorch(t *testing.T, cfg Config, seed uint64, n int) (*tally, *Finding) {
	t.Helper()
	r, err := NewRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}()
	tl := &tally{kinds: map[traces.Kind]int{}}
	rng := rand.New(rand.NewPCG(seed, tensorSeedStream))
	var failed *Result
	generated := 0
	err = r.StreamTensor(func() ([]TensorCall, bool) {
		if generated == n {
			return nil, false
		}
		generated++
		return GenerateTensorProgram(rng), true
	}, func(res *Result) bool {
		tl.add(res)
		failed = res
		return res.Failure == nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if failed == nil || failed.Failure == nil {
		return tl, nil
	}
	f, err := r.ShrinkTensor(failed.TensorCalls, failed.Failure, Options{ShrinkTime: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	f.Seed, f.Index = seed, tl.programs
	return tl, f
}

// TestTorchModel is the model against real PyTorch: 2,000 generated
// autograd programs, each call's refusal of an autograd kind (a saved
// tensor modified, an in-place op on a leaf, a backward through a freed
// graph) reported by the model at that call, and nothing reported where
// PyTorch accepts; each kind seen many times, so that the agreement is not
// an absence.
func TestTorchModel(t *testing.T) {
	tl, f := compareTorch(t, torchConfig(t), 1, torchPrograms())
	t.Logf("%d programs, %d calls, %d refused; refusals of the model's kinds %v", tl.programs, tl.calls, tl.refused, tl.kinds)
	if f != nil {
		t.Fatalf("program %d: %v\nshrunk to %d calls:\n%s\nthe driver's stderr:\n%s",
			f.Index, f.Failure(), f.Size(), f.Result.Listing(), f.Failure().Stderr)
	}
	if len(tl.diverged) > 0 {
		t.Errorf("the driver's two worlds diverged %d times: %s", len(tl.diverged), tl.diverged[0])
	}
	min := tl.programs / 40
	for _, k := range []traces.Kind{traces.SavedModified, traces.Misuse, traces.UseAfterFree} {
		if tl.kinds[k] < min {
			t.Errorf("only %d refusals as %s in %d programs: the comparison does not reach it", tl.kinds[k], k, tl.programs)
		}
	}
}

// TestTorchCatchesWrongModel: a deliberately wrong rule of the model, put
// between the model and the check (the seam is drive's, so that model/
// stays as it is), is caught against PyTorch and shrunk to a few calls.
func TestTorchCatchesWrongModel(t *testing.T) {
	longtest.Skip(t, "searches PyTorch for each wrong rule and shrinks through it")
	for _, tc := range []struct {
		name string
		rule modelRule
		want string // the failure's signature
	}{
		{"drops saved-modified", func(ev *traces.Event, step func(*traces.Event) []traces.Violation) []traces.Violation {
			var out []traces.Violation
			for _, v := range step(ev) {
				if v.Kind != traces.SavedModified {
					out = append(out, v)
				}
			}
			return out
		}, "refusal@backward"},
		{"no_grad bumps are misuse", func(ev *traces.Event, step func(*traces.Event) []traces.Violation) []traces.Violation {
			if ev.Op == traces.OpBump {
				e := *ev
				e.Kind = ""
				return step(&e)
			}
			return step(ev)
		}, "misuse@"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := torchConfig(t)
			cfg.rule = tc.rule
			_, f := compareTorch(t, cfg, 2, 500)
			if f == nil {
				t.Fatalf("500 programs passed with the model's rule wrong (%s)", tc.name)
			}
			if !strings.HasPrefix(f.Failure().sig, tc.want) {
				t.Errorf("found %v, want a failure %s...", f.Failure(), tc.want)
			}
			if f.Size() > 8 {
				t.Errorf("shrunk to %d calls, want a few:\n%s", f.Size(), f.Result.Listing())
			}
			t.Logf("%s: program %d: %v\nshrunk from %d calls to %d in %d runs:\n%s", tc.name, f.Index, f.Failure(),
				f.Steps, f.Size(), f.Shrinks, f.Result.Listing())
		})
	}
}

// TestTorchCatchesFaultyDriver: a driver that misreports what PyTorch did
// (its --fault flags) is caught by the model and shrunk to a few calls,
// through Search, as tlcheck fuzz --exec runs it.
func TestTorchCatchesFaultyDriver(t *testing.T) {
	longtest.Skip(t, "searches PyTorch for each driver fault and shrinks through it")
	for _, tc := range []struct {
		fault, want string
	}{
		{"no-view-bump", "refusal@backward"}, // a saved base written through a view: PyTorch refuses, the model saw no write
		{"no-leaf-grad", "refusal@"},         // an in-place op on a leaf: PyTorch refuses, the model knows no leaf
		{"no-unsave", "refusal@backward"},    // saved tensors never let go: a backward twice reads one the model holds
	} {
		t.Run(tc.fault, func(t *testing.T) {
			r, err := NewRunner(torchConfig(t, "--fault", tc.fault))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			found, n, err := r.Search(Options{Seed: 3, More: func(n int) bool { return n < 500 }, ShrinkTime: 2 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if len(found) == 0 {
				t.Fatalf("%d programs passed on a driver with fault %s", n, tc.fault)
			}
			f := found[0]
			if !strings.HasPrefix(f.Failure().sig, tc.want) {
				t.Errorf("found %v, want a failure %s...", f.Failure(), tc.want)
			}
			if f.Size() > 8 {
				t.Errorf("shrunk to %d calls, want a few:\n%s", f.Size(), f.Result.Listing())
			}
			t.Logf("fault %s: program %d: %v\nshrunk from %d calls to %d in %d runs:\n%s", tc.fault, f.Index, f.Failure(),
				f.Steps, f.Size(), f.Shrinks, f.Result.Listing())
		})
	}
}

// TestTorchSelfAliasedLeak keeps a finding of the comparison: PyTorch
// leaks the graph of an in-place op whose operand's graph saved the tensor
// it writes: h.mul_(h) and h.mul_(a view of h) (mul_ saves its operand),
// h.add_(h * h) (the product saved h). The saved tensor's grad_fn becomes
// the in-place op's node, which holds the node that saved it: a cycle of
// C++ objects that nothing frees, and the model reports that leak at end.
// By a detached alias, or by a sum that saves nothing, the same ops leak
// nothing. GenerateTensorProgram goes round the leaking calls; this test
// says they still leak.
func TestTorchSelfAliasedLeak(t *testing.T) {
	r, err := NewRunner(torchConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, tc := range []struct {
		name    string
		operand TensorCall // handle 3, from h (handle 2)
		op      TensorOp   // h.op(operand)
		want    string
	}{
		{"h.mul_(h.reshape(2))", TensorCall{Op: TensorReshape, Handle: 3, A: 2, Shape: []int{2}}, TensorMulInPlace, "leak@end"},
		{"h.div_(h[0:2])", TensorCall{Op: TensorSlice, Handle: 3, A: 2, Start: 0, Stop: 2}, TensorDivInPlace, "leak@end"},
		{"h.add_(h * h)", TensorCall{Op: TensorMul, Handle: 3, A: 2, B: 2}, TensorAddInPlace, "leak@end"},
		{"h.mul_(h.detach())", TensorCall{Op: TensorDetach, Handle: 3, A: 2}, TensorMulInPlace, ""},
		{"h.add_(h + h)", TensorCall{Op: TensorAdd, Handle: 3, A: 2, B: 2}, TensorAddInPlace, ""},
	} {
		res, err := r.RunTensor([]TensorCall{
			{Op: TensorLeaf, Handle: 1, Shape: []int{2}, Values: []float64{1, 2}, RequiresGrad: true},
			{Op: TensorMul, Handle: 2, A: 1, B: 1},
			tc.operand,
			{Op: tc.op, Target: 2, B: 3},
			{Op: TensorEnd},
		})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if res.Failure != nil {
			got = res.Failure.sig
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q\n%s", tc.name, got, tc.want, res.Listing())
		}
	}
}
