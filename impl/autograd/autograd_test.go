package autograd

import (
	"errors"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
)

// testLifetime is the lifetime env and ckptEnv give their engines:
// TensorLogic's, but for TestUnderPyTorchLifetime, which runs the tests
// written against them again under PyTorch's.
var testLifetime = LifetimeTensorLogic

// env is a fresh engine with one scope open.
func env(t *testing.T, faults ...impl.Fault) *Engine {
	t.Helper()
	e, err := New(impl.New(impl.Config{Faults: faults}), Config{Lifetime: testLifetime})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ScopeEnter(); err != nil {
		t.Fatal(err)
	}
	return e
}

// must fails the test on an error.
func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func leaf(t *testing.T, e *Engine, req bool, vals ...float64) *Tensor {
	t.Helper()
	return must[*Tensor](t)(e.Leaf([]int{len(vals)}, vals, req))
}

// TestRefusals holds each refusal to PyTorch's exact wording.
func TestRefusals(t *testing.T) {
	m := must[*Tensor](t)
	cases := []struct {
		name string
		run  func(e *Engine) error
		want string // the exact message
	}{
		{"in-place on a leaf that requires grad", func(e *Engine) error {
			x := leaf(t, e, true, 1, 2)
			return x.MulInPlace(2)
		}, MsgLeafInPlace},
		{"in-place on a view of such a leaf", func(e *Engine) error {
			x := leaf(t, e, true, 1, 2)
			return m(x.Slice(0, 1)).ZeroInPlace()
		}, MsgLeafViewInPlace},
		{"second backward through a node that saved", func(e *Engine) error {
			x := leaf(t, e, true, 1, 2)
			s := m(m(x.Exp()).Sum())
			if err := s.Backward(false); err != nil {
				return err
			}
			return s.Backward(false)
		}, MsgSecondBackward},
		{"saved output modified: names its node", func(e *Engine) error {
			x := leaf(t, e, true, 1, 2)
			y := m(x.Exp())
			if err := y.AddInPlace(m(e.Scalar(1)), 1); err != nil {
				return err
			}
			return m(y.Sum()).Backward(false)
		}, "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.DoubleTensor [2]], which is output 0 of ExpBackward0, is at version 1; expected version 0 instead." + msgModifiedHint},
		{"saved leaf input modified through detach: no clause", func(e *Engine) error {
			w := leaf(t, e, true, 1, 2)
			x := leaf(t, e, false, 3, 4)
			y := m(w.Mul(x))
			d := m(x.Detach())
			if err := d.MulInPlace(2); err != nil {
				return err
			}
			return m(y.Sum()).Backward(false)
		}, "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.DoubleTensor [2]] is at version 1; expected version 0 instead." + msgModifiedHint},
		{"saved non-leaf input rebased: names its new grad_fn", func(e *Engine) error {
			w := leaf(t, e, true, 1, 2)
			h := m(w.Add(w))
			y := m(h.Log())
			if err := h.ZeroInPlace(); err != nil {
				return err
			}
			return m(y.Sum()).Backward(false)
		}, "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.DoubleTensor [2]], which is output 0 of ZeroBackward0, is at version 1; expected version 0 instead." + msgModifiedHint},
		{"backward of a tensor outside any graph", func(e *Engine) error {
			return m(leaf(t, e, false, 1).Sum()).Backward(false)
		}, MsgNoGrad},
		{"backward of a non-scalar", func(e *Engine) error {
			return m(leaf(t, e, true, 1, 2).Exp()).Backward(false)
		}, MsgNotScalar},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run(env(t))
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want *Error with %q", err, c.want)
			}
			if ae.Msg != c.want {
				t.Errorf("message:\n got %s\nwant %s", ae.Msg, c.want)
			}
			if ae.Op == "" || !strings.HasPrefix(err.Error(), "autograd: "+ae.Op) {
				t.Errorf("error %q does not name its op", err)
			}
		})
	}
}

// TestAllowed: what PyTorch allows runs, with the right values.
func TestAllowed(t *testing.T) {
	m := must[*Tensor](t)
	mv := must[[]float64](t)
	t.Run("a node that saved nothing runs twice", func(t *testing.T) {
		e := env(t)
		x := leaf(t, e, true, 1, 2)
		s := m(m(x.Add(x)).Sum())
		for range 2 {
			if err := s.Backward(false); err != nil {
				t.Fatal(err)
			}
		}
		if g := mv(x.Grad().Values()); g[0] != 4 || g[1] != 4 {
			t.Errorf("grad %v, want [4 4] (2 per backward)", g)
		}
	})
	t.Run("retain_graph lets a saving node run twice", func(t *testing.T) {
		e := env(t)
		x := leaf(t, e, true, 3)
		s := m(m(x.Mul(x)).Sum())
		if err := first(s.Backward(true), s.Backward(false)); err != nil {
			t.Fatal(err)
		}
		if g := mv(x.Grad().Values()); g[0] != 12 {
			t.Errorf("grad %v, want [12]", g)
		}
	})
	t.Run("in-place through .data is invisible", func(t *testing.T) {
		e := env(t)
		w := leaf(t, e, true, 2)
		y := m(w.Mul(w))
		if err := m(w.Data()).MulInPlace(10); err != nil {
			t.Fatal(err)
		}
		if w.Version() != 0 {
			t.Errorf("w's version %d after an in-place op through .data, want 0", w.Version())
		}
		if err := m(y.Sum()).Backward(false); err != nil {
			t.Fatal(err)
		}
		if g := mv(w.Grad().Values()); g[0] != 40 {
			t.Errorf("grad %v, want [40]: the saved w was changed in place", g)
		}
	})
	t.Run("NoGrad update of a leaf", func(t *testing.T) {
		e := env(t)
		w := leaf(t, e, true, 1)
		err := e.NoGrad(func() error { return w.AddInPlace(m(e.Scalar(1)), -0.5) })
		if err != nil || w.Version() != 1 {
			t.Fatalf("err %v, version %d", err, w.Version())
		}
	})
	t.Run("matmul and views", func(t *testing.T) {
		e := env(t)
		a := must[*Tensor](t)(e.Leaf([]int{2, 2}, []float64{1, 2, 3, 4}, true))
		b := must[*Tensor](t)(e.Leaf([]int{2, 1}, []float64{5, 6}, true))
		r := m(m(m(a.Matmul(b)).Reshape(2)).Slice(1, 2))
		if v := mv(r.Values()); v[0] != 39 {
			t.Fatalf("value %v, want [39]", v)
		}
		if err := m(r.Sum()).Backward(false); err != nil {
			t.Fatal(err)
		}
		ga, gb := mv(a.Grad().Values()), mv(b.Grad().Values())
		if ga[0] != 0 || ga[1] != 0 || ga[2] != 5 || ga[3] != 6 || gb[0] != 3 || gb[1] != 4 {
			t.Errorf("grads %v %v, want [0 0 5 6] [3 4]", ga, gb)
		}
	})
	t.Run("zero_grad to none and a freed graph tensor refused", func(t *testing.T) {
		e := env(t)
		x := leaf(t, e, true, 1)
		h := m(x.Exp())
		s := m(h.Sum())
		if err := s.Backward(false); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Values(); (err == nil) != (e.life.kind() == LifetimePyTorch) {
			t.Errorf("reading h after backward: %v; want it refused (freed) under TensorLogic's lifetime only", err)
		}
		if err := e.ZeroGrad(x); err != nil || x.Grad() != nil {
			t.Errorf("ZeroGrad: %v, grad %v", err, x.Grad())
		}
	})
}

// TestVersions: an in-place op bumps every alias sharing the counter by
// exactly one, and no other; the faults break one or the other.
func TestVersions(t *testing.T) {
	m := must[*Tensor](t)
	run := func(e *Engine) (base, view, det, data int) {
		x := leaf(t, e, false, 1, 2, 3, 4)
		v := m(x.Slice(1, 3))
		d := m(x.Detach())
		dt := m(x.Data())
		if err := v.AddInPlace(m(e.Scalar(1)), 1); err != nil {
			t.Fatal(err)
		}
		return x.Version(), v.Version(), d.Version(), dt.Version()
	}
	cases := []struct {
		fault impl.Fault
		ok    bool
	}{{"", true}, {FaultAutogradViewOwnVersion, false}, {FaultAutogradDoubleBump, false}}
	for _, c := range cases {
		t.Run(string(c.fault), func(t *testing.T) {
			var fs []impl.Fault
			if c.fault != "" {
				fs = append(fs, c.fault)
			}
			b, v, d, dt := run(env(t, fs...))
			ok := b == 1 && v == 1 && d == 1 && dt == 0
			if ok != c.ok {
				t.Errorf("versions base %d view %d detach %d data %d: correct %t, want %t", b, v, d, dt, ok, c.ok)
			}
		})
	}
}

// TestFaultsFromRuntime: the engine has exactly the autograd faults its
// runtime has on, one at a time; the catalog is impl's.
func TestFaultsFromRuntime(t *testing.T) {
	var ours []impl.Fault
	for _, fi := range impl.Catalog() {
		if fi.Engine == impl.EngineAutograd {
			ours = append(ours, fi.Name)
		}
	}
	if len(ours) == 0 {
		t.Fatal("impl.Catalog has no autograd fault")
	}
	for _, on := range append([]impl.Fault{""}, ours...) {
		var fs []impl.Fault
		if on != "" {
			fs = []impl.Fault{on}
		}
		e := env(t, fs...)
		for _, f := range ours {
			if got := e.has(f); got != (f == on) {
				t.Errorf("runtime with %v: engine has %s = %t", fs, f, got)
			}
		}
	}
	if _, err := New(nil, Config{}); err == nil {
		t.Error("New accepted a nil runtime")
	}
}
