package autograd

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// ckptEnv is env with the engine's events recorded.
func ckptEnv(t *testing.T, cfg Config, faults ...impl.Fault) (*Engine, *[]traces.Event) {
	t.Helper()
	evs := &[]traces.Event{}
	cfg.Record = func(ev traces.Event) { *evs = append(*evs, ev) }
	cfg.Lifetime = testLifetime
	e, err := New(impl.New(impl.Config{Faults: faults}), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ScopeEnter(); err != nil {
		t.Fatal(err)
	}
	return e, evs
}

// ops lists the layer-5 ops recorded, "snapshot s1", "restore s1", ...
func ops(evs []traces.Event) string {
	var b []string
	for _, ev := range evs {
		switch ev.Op {
		case traces.OpSnapshot, traces.OpRestore, traces.OpRecompute, traces.OpUnpack, traces.OpUnsave:
			b = append(b, ev.Op.String()+" "+ev.Name)
		}
	}
	return strings.Join(b, "; ")
}

// freeGraph frees root's graph under TensorLogic's lifetime; under
// PyTorch's End does, once the program's references are dropped.
func freeGraph(e *Engine, root *Tensor) error {
	if e.life.kind() == LifetimePyTorch {
		return nil
	}
	return e.FreeGraph(root)
}

func values(t *testing.T, x *Tensor) []float64 {
	t.Helper()
	return must[[]float64](t)(x.Values())
}

func near(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12 {
			return false
		}
	}
	return true
}

// TestCheckpointRestore: w*x saves x under Checkpoint; x.add_ snapshots x
// first, and backward restores x's old values from the snapshot instead
// of refusing: w's grad is the x it multiplied. x keeps its new values,
// and the snapshot is released with the graph.
func TestCheckpointRestore(t *testing.T) {
	m := must[*Tensor](t)
	for _, ckpt := range []bool{false, true} {
		e, evs := ckptEnv(t, Config{})
		x := leaf(t, e, false, 1, 2)
		w := leaf(t, e, true, 3, 4)
		var y *Tensor
		mul := func() error { var err error; y, err = w.Mul(x); return err }
		if ckpt {
			must[struct{}](t)(struct{}{}, e.Checkpoint(mul))
		} else if err := mul(); err != nil {
			t.Fatal(err)
		}
		before := len(e.rt.State().Objects)
		if err := x.AddInPlace(m(e.Scalar(1)), 1); err != nil {
			t.Fatal(err)
		}
		err := m(y.Sum()).Backward(false)
		if !ckpt {
			if err == nil || !strings.Contains(err.Error(), "modified by an inplace operation") {
				t.Fatalf("without checkpoint: backward %v, want PyTorch's refusal", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if g := values(t, w.Grad()); !near(g, []float64{1, 2}) {
			t.Errorf("w.grad %v, want [1 2] (x before add_)", g)
		}
		if v := values(t, x); !near(v, []float64{2, 3}) {
			t.Errorf("x %v after backward, want [2 3]: a restore does not write the storage", v)
		}
		if got, want := ops(*evs), "snapshot s1; restore s1; unsave s1"; got != want {
			t.Errorf("events %q, want %q", got, want)
		}
		// The scalar, the root and w's grad are new; y and the
		// snapshot are gone. Under PyTorch's lifetime y stays (the
		// program holds it), and the root's node is an object too.
		want := before + 2
		if e.life.kind() == LifetimePyTorch {
			want = before + 4
		}
		if after := len(e.rt.State().Objects); after != want {
			t.Errorf("%d live objects after backward, want %d (the snapshot released)", after, want)
		}
	}
}

// TestCheckpointRecompute: exp saves its output h; h written under
// NoGrad takes no snapshot, so backward recomputes exp(a) and writes it
// into h's storage, where a view of h sees it too.
func TestCheckpointRecompute(t *testing.T) {
	m := must[*Tensor](t)
	e, evs := ckptEnv(t, Config{Checkpoint: true})
	a := leaf(t, e, true, 0.5, 1)
	h := m(a.Exp())
	v := m(h.Slice(1, 2))
	if err := e.NoGrad(func() error { return h.MulInPlace(3) }); err != nil {
		t.Fatal(err)
	}
	if err := m(h.Sum()).Backward(false); err != nil {
		t.Fatal(err)
	}
	want := []float64{math.Exp(0.5), math.Exp(1)}
	if g := values(t, a.Grad()); !near(g, want) {
		t.Errorf("a.grad %v, want exp(a) %v", g, want)
	}
	if got := values(t, v); !near(got, want[1:]) {
		t.Errorf("the view of h reads %v after the recompute, want %v", got, want[1:])
	}
	if h.Version() != 1 {
		t.Errorf("h at version %d, want 1: a recompute is no in-place op", h.Version())
	}
	if got, want := ops(*evs), "recompute s1; unpack s1; unsave s1"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
}

// TestCheckpointStaleSnapshot: h saved by exp at version 0 (s1) and by
// mul at version 1 (s2, after a NoGrad write); a tracked in-place op then
// snapshots version 1 only. Backward (retaining the graph, so that both
// snapshots live to the end) restores the mul's h from it and recomputes
// the exp's h, for which the storage's only snapshot is stale.
func TestCheckpointStaleSnapshot(t *testing.T) {
	m := must[*Tensor](t)
	{
		e, evs := ckptEnv(t, Config{Checkpoint: true})
		a := leaf(t, e, true, 0.5, 1)
		h := m(a.Exp())
		if err := e.NoGrad(func() error { return h.MulInPlace(2) }); err != nil {
			t.Fatal(err)
		}
		c := leaf(t, e, true, 1, 1)
		y := m(h.Mul(c)) // s2: c, s3: h@1 (MulBackward0 saves the other operand first)
		if err := h.AddInPlace(m(e.Scalar(1)), 1); err != nil {
			t.Fatal(err)
		}
		root := m(m(y.Add(h)).Sum())
		if err := root.Backward(true); err != nil {
			t.Fatal(err)
		}
		if got, want := ops(*evs), "snapshot s3; unpack s2; restore s3; recompute s1; unpack s1"; got != want {
			t.Errorf("events %q, want %q", got, want)
		}
		if g := values(t, c.Grad()); !near(g, []float64{2 * math.Exp(0.5), 2 * math.Exp(1)}) {
			t.Errorf("c.grad %v, want h at version 1, 2exp(a)", g)
		}
		if err := freeGraph(e, root); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckpointRestoreWrongVersion: with
// autograd-restore-wrong-version the snapshot is taken after add_ wrote
// and bumped x, so the snapshot filed for x's saved version 0 holds
// version 1: it is restored (the trace shows the snapshot after the
// bump, which the model reports), and w's grad is the new x.
func TestCheckpointRestoreWrongVersion(t *testing.T) {
	m := must[*Tensor](t)
	e, evs := ckptEnv(t, Config{Checkpoint: true}, FaultAutogradRestoreWrongVersion)
	x := leaf(t, e, false, 1, 2)
	w := leaf(t, e, true, 3, 4)
	y := m(w.Mul(x))
	if err := x.AddInPlace(m(e.Scalar(1)), 1); err != nil {
		t.Fatal(err)
	}
	if err := m(y.Sum()).Backward(false); err != nil {
		t.Fatal(err)
	}
	if g := values(t, w.Grad()); !near(g, []float64{2, 3}) {
		t.Errorf("w.grad %v, want [2 3], the values after add_", g)
	}
	var order []string
	for _, ev := range *evs {
		if ev.Op == traces.OpBump || ev.Op == traces.OpSnapshot {
			order = append(order, ev.Op.String())
		}
	}
	if got := strings.Join(order, " "); got != "bump snapshot" {
		t.Errorf("events %q, want the snapshot after the bump", got)
	}
}

// TestCheckpointRefusals: what no checkpoint can give back is refused as
// PyTorch refuses it: a leaf written under NoGrad (no snapshot, nothing
// to recompute from), and a saved output whose node's input moved on.
func TestCheckpointRefusals(t *testing.T) {
	m := must[*Tensor](t)
	e, _ := ckptEnv(t, Config{Checkpoint: true})
	x := leaf(t, e, false, 1, 2)
	w := leaf(t, e, true, 3, 4)
	y := m(w.Mul(x))
	if err := e.NoGrad(func() error { return x.MulInPlace(2) }); err != nil {
		t.Fatal(err)
	}
	if err := m(y.Sum()).Backward(false); err == nil || !strings.Contains(err.Error(), "is at version 1; expected version 0") {
		t.Errorf("leaf written under NoGrad: backward %v, want PyTorch's refusal", err)
	}
	b := leaf(t, e, false, 1, 2)
	d := m(b.Add(w)) // not saved, but the input of exp
	h := m(d.Exp())
	if err := e.NoGrad(func() error { return first(h.MulInPlace(2), d.MulInPlace(2)) }); err != nil {
		t.Fatal(err)
	}
	if err := m(h.Sum()).Backward(false); err == nil || !strings.Contains(err.Error(), "output 0 of ExpBackward0") {
		t.Errorf("exp's input moved on: backward %v, want PyTorch's refusal", err)
	}
	// g saved by mul at version 1, after a NoGrad write: redoing exp
	// would give version 0's values, so it is refused, not recomputed.
	g := m(w.Exp())
	if err := e.NoGrad(func() error { return g.MulInPlace(2) }); err != nil {
		t.Fatal(err)
	}
	z := m(g.Mul(w))
	if err := e.NoGrad(func() error { return g.MulInPlace(3) }); err != nil {
		t.Fatal(err)
	}
	if err := m(z.Sum()).Backward(false); err == nil || !strings.Contains(err.Error(), "is at version 2; expected version 1") {
		t.Errorf("saved after a NoGrad write: backward %v, want PyTorch's refusal", err)
	}
}

// recomputeSetup is issue 17's sequence up to its first backward: a leaf
// a, h = exp(a) (saves h at version 0, checkpointed), h.mul_(3) under
// NoGrad (version 1, no snapshot), a leaf c, y = h*c (saves h at version
// 1, and c), root = y.sum().
func recomputeSetup(t *testing.T) (e *Engine, evs *[]traces.Event, a, h, c, root *Tensor) {
	t.Helper()
	m := must[*Tensor](t)
	e, evs = ckptEnv(t, Config{Checkpoint: true})
	a = leaf(t, e, true, 0.5, 1)
	h = m(a.Exp())
	if err := e.NoGrad(func() error { return h.MulInPlace(3) }); err != nil {
		t.Fatal(err)
	}
	c = leaf(t, e, true, 2, 5)
	root = m(m(h.Mul(c)).Sum())
	return e, evs, a, h, c, root
}

// TestCheckpointRecomputeHoldsSavedVersion (issue 17, item 3): the first
// backward (retain_graph) unpacks the mul's h at version 1 and recomputes
// the exp's h, writing version 0's values back into the storage. The
// storage then holds version 0 although its counter says 1, so a second
// backward must refuse the mul's h as modified; an engine that records
// the counter's version after a recompute accepts it and reads exp(a)
// where 3exp(a) was saved, so c.grad grows by the wrong amount.
func TestCheckpointRecomputeHoldsSavedVersion(t *testing.T) {
	e, evs, a, h, c, root := recomputeSetup(t)
	if err := root.Backward(true); err != nil {
		t.Fatal(err)
	}
	ea := []float64{math.Exp(0.5), math.Exp(1)}
	if g := values(t, c.Grad()); !near(g, []float64{3 * ea[0], 3 * ea[1]}) {
		t.Errorf("c.grad %v, want 3exp(a)", g)
	}
	if g := values(t, a.Grad()); !near(g, []float64{2 * ea[0], 5 * ea[1]}) {
		t.Errorf("a.grad %v, want c*exp(a) (the recomputed h)", g)
	}
	if got, want := ops(*evs), "unpack s2; unpack s3; recompute s1; unpack s1"; got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	if v := values(t, h); !near(v, ea) || h.Version() != 1 {
		t.Errorf("h holds %v at version %d, want exp(a) (version 0's values) at version 1", v, h.Version())
	}
	err := root.Backward(true)
	want := "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.DoubleTensor [2]], which is output 0 of ExpBackward0, is at version 0; expected version 1 instead." + msgModifiedHint
	var ae *Error
	if !errors.As(err, &ae) || ae.Msg != want {
		t.Fatalf("second backward: %v\nwant the refusal %q", err, want)
	}
	if g := values(t, c.Grad()); !near(g, []float64{3 * ea[0], 3 * ea[1]}) {
		t.Errorf("c.grad %v after the refused backward, want it unchanged, 3exp(a)", g)
	}
	if err := freeGraph(e, root); err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointVersionAfterRecompute: the siblings of issue 17's item 3,
// what follows a recompute of h = exp(a) (h.sum()'s backward, retaining
// the graph, after h.mul_(3) under NoGrad put h at version 1). The
// storage holds version 0's values until the next in-place op, which
// clears that: a tracked write first snapshots version 0 for the exp's
// h, and the next backward restores it; a NoGrad write takes none, and
// the next backward recomputes again. Either way a.grad grows by exp(a)
// each backward, and h's counter only ever counts the in-place ops.
func TestCheckpointVersionAfterRecompute(t *testing.T) {
	tests := []struct {
		name    string
		write   func(e *Engine, h *Tensor) error
		version int    // h's counter after the write
		events  string // the layer-5 events of the second backward
	}{
		{"a tracked add_ snapshots the recomputed values", func(e *Engine, h *Tensor) error {
			return h.AddInPlace(must[*Tensor](t)(e.Scalar(1)), 1)
		}, 2, "snapshot s1; restore s1"},
		{"a NoGrad mul_ takes no snapshot: recompute again", func(e *Engine, h *Tensor) error {
			return e.NoGrad(func() error { return h.MulInPlace(2) })
		}, 2, "recompute s1; unpack s1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := must[*Tensor](t)
			e, evs := ckptEnv(t, Config{Checkpoint: true})
			a := leaf(t, e, true, 0.5, 1)
			h := m(a.Exp())
			if err := e.NoGrad(func() error { return h.MulInPlace(3) }); err != nil {
				t.Fatal(err)
			}
			root := m(h.Sum())
			if err := root.Backward(true); err != nil {
				t.Fatal(err)
			}
			if got, want := ops(*evs), "recompute s1; unpack s1"; got != want {
				t.Fatalf("first backward: events %q, want %q", got, want)
			}
			*evs = nil
			if err := tt.write(e, h); err != nil {
				t.Fatal(err)
			}
			if h.Version() != tt.version {
				t.Errorf("h at version %d after the write, want %d", h.Version(), tt.version)
			}
			if err := root.Backward(true); err != nil {
				t.Fatal(err)
			}
			if got := ops(*evs); got != tt.events {
				t.Errorf("second backward: events %q, want %q", got, tt.events)
			}
			ea := []float64{math.Exp(0.5), math.Exp(1)}
			if g := values(t, a.Grad()); !near(g, []float64{2 * ea[0], 2 * ea[1]}) {
				t.Errorf("a.grad %v, want 2exp(a): each backward reads exp(a), the values saved", g)
			}
			if err := freeGraph(e, root); err != nil {
				t.Fatal(err)
			}
		})
	}
}
