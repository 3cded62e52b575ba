package autograd

import (
	"fmt"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// In-place ops write into the tensor's storage and bump its version
// counter by exactly one, which every alias sharing the counter (base,
// views, Detach) sees. On a tensor in a graph they rebase its history:
// the tensor's grad_fn becomes the in-place op's node, whose input is
// the old history.

// AddInPlace does t += alpha*o (PyTorch's add_(o, alpha=alpha);
// AddBackward0, saves nothing).
func (t *Tensor) AddInPlace(o *Tensor, alpha float64) error {
	if err := first(t.check("add_"), o.check("add_")); err != nil {
		return err
	}
	if o.Numel() != 1 && !sameShape(t.shape, o.shape) {
		return &Error{Op: "add_", Tensor: t.id, Msg: fmt.Sprintf("output with shape %v doesn't match the broadcast shape %v", t.shape, o.shape)}
	}
	y := o.read()
	return t.inplace("add_", "AddBackward0", o, func(x []float64) {
		for i := range x {
			x[i] += alpha * at(y, i)
		}
	}, func(g []float64) [][]float64 {
		go_ := make([]float64, o.Numel())
		for i := range g {
			go_[i%len(go_)] += alpha * g[i]
		}
		return [][]float64{g, go_}
	})
}

// MulInPlace does t *= c for a constant c (MulBackward0, saves nothing).
func (t *Tensor) MulInPlace(c float64) error {
	if err := t.check("mul_"); err != nil {
		return err
	}
	return t.inplace("mul_", "MulBackward0", nil, func(x []float64) {
		for i := range x {
			x[i] *= c
		}
	}, func(g []float64) [][]float64 {
		ga := make([]float64, len(g))
		for i := range g {
			ga[i] = c * g[i]
		}
		return [][]float64{ga}
	})
}

// ZeroInPlace sets t to zeros (ZeroBackward0, saves nothing).
func (t *Tensor) ZeroInPlace() error {
	if err := t.check("zero_"); err != nil {
		return err
	}
	return t.inplace("zero_", "ZeroBackward0", nil, func(x []float64) { clear(x) },
		func(g []float64) [][]float64 { return [][]float64{make([]float64, len(g))} })
}

// inplace checks PyTorch's rules (check_inplace), applies f to t's
// values, bumps the version and, in a graph, rebases t's history.
func (t *Tensor) inplace(op, name string, o *Tensor, f func([]float64), back func([]float64) [][]float64) error {
	e := t.e
	graphed := e.noGrad == 0 && (t.reqGrad || (o != nil && o.reqGrad))
	if e.noGrad == 0 && t.reqGrad {
		if t.fn() == nil {
			return &Error{Op: op, Tensor: t.id, Msg: MsgLeafInPlace}
		}
		if t.base != nil && t.base.reqGrad && t.base.gradFn == nil {
			return &Error{Op: op, Tensor: t.id, Msg: MsgLeafViewInPlace}
		}
		if t.base != nil {
			return &Error{Op: op, Tensor: t.id, Msg: "an in-place op on a view of a graph tensor is not supported by this runtime (PyTorch rebases the base with CopySlices)"}
		}
	}
	if graphed && !t.reqGrad {
		return &Error{Op: op, Tensor: t.id, Msg: "an in-place op that brings a tensor outside any graph into one is not supported by this runtime"}
	}
	// A checkpoint copies what backward still needs before the op
	// writes it; under NoGrad autograd does not see the op.
	var due []*saved
	if e.noGrad == 0 && !t.vc.data {
		due = t.st.unsnapped()
	}
	late := e.has(impl.FaultAutogradRestoreWrongVersion)
	if !late {
		if err := e.snapshot(t, due); err != nil {
			return err
		}
	}
	x := t.read()
	f(x)
	t.write(x)
	t.vc.v++
	if !t.vc.data {
		t.st.restored = 0
		ev := traces.Event{Op: traces.OpBump, Addr: t.st.addr}
		if e.noGrad > 0 || !t.reqGrad {
			// Autograd does not track it: grad mode is off, or the
			// tensor written is outside the graph (a detached alias of
			// a leaf may be written, as in PyTorch).
			ev.Kind = "no_grad"
		}
		e.emit(ev)
	}
	if late {
		// cgadimpl's checkpoint hook ran after the kernel: the snapshot
		// filed for the saved version holds the next one.
		if err := e.snapshot(t, due); err != nil {
			return err
		}
	}
	if e.has(impl.FaultAutogradDoubleBump) {
		t.vc.v++
	}
	if !graphed {
		return nil
	}
	ins := []*Tensor{t}
	if o != nil {
		ins = append(ins, o)
	}
	nd := e.newNode(name, ins, func(g []float64, _ [][]float64) [][]float64 { return back(g) })
	nd.handles = nil
	t.gradFn, t.outputNr = nd, 0
	return nil
}
