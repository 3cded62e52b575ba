package autograd

import (
	"slices"

	"github.com/tlcheck/tlcheck/traces"
)

// In-place ops write into the tensor's storage and bump its version
// counter by exactly one, which every alias sharing the counter (base,
// views, Detach) sees. When the op is recorded (grad mode on, and the
// tensor or the operand requires grad) it rebases the tensor's history:
// its grad_fn becomes the op's node, whose input is the old history; a
// tensor outside any graph joins one (t.add_(w)). On a view, PyTorch's
// CopySlices becomes its base's grad_fn and the view's own is made anew
// from the base (see Tensor.fn).
//
// What PyTorch refuses is refused in its words and in its order:
// check_inplace first (a view made under NoGrad, a view of a leaf that
// requires grad, such a leaf), then the kernel's checks (an operand
// partly sharing the written elements, an operand that does not
// broadcast to the written tensor's shape).

// AddInPlace does t += alpha*o (PyTorch's add_(o, alpha=alpha);
// AddBackward0, saves nothing).
func (t *Tensor) AddInPlace(o *Tensor, alpha float64) error {
	return t.withTensor("add_", "AddBackward0", o, func(x, y float64) float64 { return x + alpha*y },
		func(g, _, _ float64) (float64, float64) { return g, alpha * g }, 0)
}

// SubInPlace does t -= alpha*o (sub_(o, alpha=alpha); SubBackward0,
// saves nothing).
func (t *Tensor) SubInPlace(o *Tensor, alpha float64) error {
	return t.withTensor("sub_", "SubBackward0", o, func(x, y float64) float64 { return x - alpha*y },
		func(g, _, _ float64) (float64, float64) { return g, -alpha * g }, 0)
}

// MulTensorInPlace does t *= o (mul_(o); MulBackward0: saves o if t
// requires grad, and a clone of t's values before the op if o does).
func (t *Tensor) MulTensorInPlace(o *Tensor) error {
	return t.withTensor("mul_", "MulBackward0", o, func(x, y float64) float64 { return x * y },
		func(g, x, y float64) (float64, float64) { return g * y, g * x }, saveCross)
}

// DivInPlace does t /= o (div_(o); DivBackward0: saves a clone of t's
// values before the op if o requires grad, and o).
func (t *Tensor) DivInPlace(o *Tensor) error {
	return t.withTensor("div_", "DivBackward0", o, func(x, y float64) float64 { return x / y },
		func(g, x, y float64) (float64, float64) { return g / y, -g * ((x / y) / y) }, saveDiv)
}

// AddScalarInPlace does t += c for a number c (add_(c); AddBackward0,
// saves nothing).
func (t *Tensor) AddScalarInPlace(c float64) error {
	if err := t.check("add_"); err != nil {
		return err
	}
	return t.inplace("add_", "AddBackward0", nil, func(x []float64) {
		for i := range x {
			x[i] += c
		}
	}, func(*node, []float64) (func(g []float64, sv [][]float64) [][]float64, error) {
		return func(g []float64, _ [][]float64) [][]float64 { return [][]float64{g} }, nil
	})
}

// MulInPlace does t *= c for a number c (mul_(c); MulBackward0, which
// saves c as PyTorch saves a wrapped number: a second backward through
// it without retain_graph is refused).
func (t *Tensor) MulInPlace(c float64) error {
	if err := t.check("mul_"); err != nil {
		return err
	}
	return t.inplace("mul_", "MulBackward0", nil, func(x []float64) {
		for i := range x {
			x[i] *= c
		}
	}, func(nd *node, old []float64) (func(g []float64, sv [][]float64) [][]float64, error) {
		if !t.edge() {
			return func([]float64, [][]float64) [][]float64 { return [][]float64{nil} }, nil
		}
		i, err := t.e.saveCopy(nd, "mul_", []int{}, []float64{c})
		return func(g []float64, sv [][]float64) [][]float64 {
			ga := make([]float64, len(g))
			for k := range g {
				ga[k] = sv[i][0] * g[k]
			}
			return [][]float64{ga}
		}, err
	})
}

// SubScalarInPlace does t -= c for a number c (sub_(c); SubBackward0,
// saves nothing).
func (t *Tensor) SubScalarInPlace(c float64) error {
	if err := t.check("sub_"); err != nil {
		return err
	}
	return t.inplace("sub_", "SubBackward0", nil, func(x []float64) {
		for i := range x {
			x[i] -= c
		}
	}, func(*node, []float64) (func(g []float64, sv [][]float64) [][]float64, error) {
		return func(g []float64, _ [][]float64) [][]float64 { return [][]float64{g} }, nil
	})
}

// DivScalarInPlace does t /= c for a number c (div_(c); DivBackward0,
// which saves c as PyTorch saves a wrapped number, as MulInPlace does).
func (t *Tensor) DivScalarInPlace(c float64) error {
	if err := t.check("div_"); err != nil {
		return err
	}
	return t.inplace("div_", "DivBackward0", nil, func(x []float64) {
		for i := range x {
			x[i] /= c
		}
	}, func(nd *node, old []float64) (func(g []float64, sv [][]float64) [][]float64, error) {
		if !t.edge() {
			return func([]float64, [][]float64) [][]float64 { return [][]float64{nil} }, nil
		}
		i, err := t.e.saveCopy(nd, "div_", []int{}, []float64{c})
		return func(g []float64, sv [][]float64) [][]float64 {
			ga := make([]float64, len(g))
			for k := range g {
				ga[k] = g[k] / sv[i][0]
			}
			return [][]float64{ga}
		}, err
	})
}

// ZeroInPlace sets t to zeros (ZeroBackward0, saves nothing).
func (t *Tensor) ZeroInPlace() error {
	if err := t.check("zero_"); err != nil {
		return err
	}
	return t.inplace("zero_", "ZeroBackward0", nil, func(x []float64) { clear(x) },
		func(*node, []float64) (func(g []float64, sv [][]float64) [][]float64, error) {
			return func(g []float64, _ [][]float64) [][]float64 { return [][]float64{make([]float64, len(g))} }, nil
		})
}

// withTensor is an elementwise in-place op t = f(t, o), o broadcast to
// t's shape; df gives both operands' gradients, and saves says what the
// node keeps (0, saveCross or saveDiv, as the out-of-place op, with a
// clone of t's old values standing for t).
func (t *Tensor) withTensor(op, name string, o *Tensor, f func(x, y float64) float64,
	df func(g, x, y float64) (float64, float64), saves int) error {
	if err := first(t.check(op), o.check(op)); err != nil {
		return err
	}
	if err := t.refuseInPlace(op, o); err != nil {
		return err
	}
	if t.e.noGrad == 0 && (t.requiresGrad() || o.requiresGrad()) {
		// The node asks for the operands' grad_fns before the kernel
		// runs: a stale view made under NoGrad is refused first.
		if err := first(t.use(op), o.use(op)); err != nil {
			return err
		}
	}
	if err := overlapping(op, t, o); err != nil {
		return err
	}
	shape, err := broadcastShape(op, t.id, t.shape, o.shape)
	if err != nil {
		return err
	}
	if !sameShape(shape, t.shape) {
		return &Error{Op: op, Tensor: t.id, Msg: "output with shape " + shapeString(t.shape) + " doesn't match the broadcast shape " + shapeString(shape)}
	}
	y := o.read()
	iy := broadcastIndex(t.shape, o.shape)
	return t.inplace(op, name, o, func(x []float64) {
		for i := range x {
			x[i] = f(x[i], y[iy[i]])
		}
	}, func(nd *node, old []float64) (func(g []float64, sv [][]float64) [][]float64, error) {
		e := t.e
		ix, io := -1, -1
		var err error
		saveSelf := func() { ix, err = e.saveCopy(nd, op, t.shape, old) }
		saveOther := func() { io, err = e.save(nd, o, false) }
		switch saves {
		case saveCross:
			if o.edge() {
				saveSelf()
			}
			if err == nil && t.edge() {
				saveOther()
			}
		case saveDiv:
			if o.edge() {
				saveSelf()
			}
			if err == nil {
				saveOther()
			}
		}
		no := o.Numel()
		return func(g []float64, sv [][]float64) [][]float64 {
			xs, ys := old, y
			if ix >= 0 {
				xs = sv[ix]
			}
			if io >= 0 {
				ys = sv[io]
			}
			gt, gother := make([]float64, len(g)), make([]float64, no)
			for i := range g {
				dt, do := df(g[i], xs[i], ys[iy[i]])
				gt[i] = dt
				gother[iy[i]] += do
			}
			return [][]float64{gt, gother}
		}, err
	})
}

// refuseInPlace is PyTorch's check_inplace for an in-place op on t with
// operand o (nil for a number): when the op is recorded, a view made
// under NoGrad, a view of a leaf that requires grad, and such a leaf
// are refused.
//
// check_inplace asks requires_grad() and is_leaf(), neither of which
// makes a view's grad_fn anew (VariableHooks::is_leaf reads grad_fn_ as
// it is): so a view made while its base required no grad, whose base
// an in-place op has since brought into a graph, is refused as a leaf
// until something asks for its grad_fn (which Tensor.fn makes anew).
func (t *Tensor) refuseInPlace(op string, o *Tensor) error {
	if t.e.noGrad > 0 {
		return nil
	}
	req := t.reqGrad || t.diffView && t.base.reqGrad // requiresGrad, without making a grad_fn anew
	if !req && (o == nil || !o.requiresGrad()) {
		return nil
	}
	switch {
	case t.noGradView:
		return &Error{Op: op, Tensor: t.id, Msg: MsgNoGradViewInPlace}
	case t.diffView && req && t.base.reqGrad && t.base.gradFn == nil:
		return &Error{Op: op, Tensor: t.id, Msg: MsgLeafViewInPlace}
	case req && t.gradFn == nil:
		return &Error{Op: op, Tensor: t.id, Msg: MsgLeafInPlace}
	}
	return nil
}

// overlapping is PyTorch's assert_no_partial_overlap between the written
// tensor t and the operand o: the same elements of one storage are
// allowed (x.add_(x)), a part of them is refused (x.add_(x[2:3]), and
// t.reshape(1,1).add_(t), which reads the same elements as another
// shape).
func overlapping(op string, t, o *Tensor) error {
	if t.st != o.st {
		return nil
	}
	tb, te := t.off, t.off+t.Numel()
	ob, oe := o.off, o.off+o.Numel()
	full := tb == ob && te == oe && sameShape(t.shape, o.shape)
	if !full && tb < oe && ob < te {
		return &Error{Op: op, Tensor: t.id, Msg: MsgOverlap}
	}
	return nil
}

// saveCopy makes n keep a new tensor holding vals (a wrapped number, or
// a clone of an in-place op's input), whose only reference is the
// saved tensor's: it is freed when n releases its saved tensors.
func (e *Engine) saveCopy(n *node, op string, shape []int, vals []float64) (int, error) {
	c, err := e.result(op, shape, vals)
	if err != nil {
		return 0, err
	}
	i, err := e.save(n, c, false)
	if err != nil {
		return 0, err
	}
	c.dead, c.held = true, false
	err = e.life.savedCopy(c)
	if err = first(err, e.rt.Release(c.st.addr)); err != nil {
		return 0, &Error{Op: op, Tensor: c.id, Msg: err.Error()}
	}
	return i, nil
}

// inplace checks PyTorch's rules (check_inplace) for an op without a
// tensor operand (o is nil; withTensor has checked them otherwise),
// applies f to t's values, bumps the version and, when the op is
// recorded, rebases t's history onto a node whose formula mk makes
// (mk saves what it needs on the node, given t's values before the op).
func (t *Tensor) inplace(op, name string, o *Tensor, f func([]float64),
	mk func(*node, []float64) (func(g []float64, sv [][]float64) [][]float64, error)) error {
	e := t.e
	if o == nil {
		if err := t.refuseInPlace(op, nil); err != nil {
			return err
		}
	}
	graphed := e.noGrad == 0 && (t.requiresGrad() || (o != nil && o.requiresGrad()))
	// check_inplace does not look at an op with grad mode off, or on a
	// tensor that does not require grad, or on a detached alias (or a
	// view of one): PyTorch lets you write a detached alias of a leaf,
	// even once an operand that requires grad has brought it into a
	// graph. The model is told so by the bump's kind.
	unchecked := e.noGrad > 0 || !t.requiresGrad() || t.root().detached
	x := t.read()
	// The node saves what its formula needs before the op writes: an
	// operand that is t itself (or an alias) is saved at its version
	// before the op, as PyTorch saves it, and found modified at unpack.
	view := t.diffView && t.base != nil
	var nd *node
	if graphed {
		ins := []*Tensor{t}
		if o != nil {
			ins = append(ins, o)
		}
		if view {
			// The op's node takes the view's gradient; CopySlices, the
			// base's new grad_fn, hands it the view's part of the base's.
			e.nodes++
			nd = &node{name: name, seq: e.nodes, next: make([]edge, len(ins))}
		} else {
			nd = e.newNode(name, ins, nil)
		}
		apply, err := mk(nd, slices.Clone(x))
		if err != nil {
			return err
		}
		nd.apply = apply
	}
	// A checkpoint copies what backward still needs before the op
	// writes it; under NoGrad autograd does not see the op.
	var due []*saved
	if e.noGrad == 0 && !t.vc.data {
		due = t.st.unsnapped()
	}
	late := e.has(FaultAutogradRestoreWrongVersion)
	if !late {
		if err := e.snapshot(t, due); err != nil {
			return err
		}
	}
	f(x)
	t.write(x)
	t.vc.v++
	if !t.vc.data {
		if !e.has(FaultAutogradInplaceKeepsRestored) {
			t.st.restored = 0 // the storage now holds the new version
		}
		ev := traces.Event{Op: traces.OpBump, Addr: t.st.addr}
		if unchecked {
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
	if e.has(FaultAutogradDoubleBump) {
		t.vc.v++
	}
	var err error
	switch {
	case !graphed:
	case view:
		err = e.copySlices(t, o, nd)
	default:
		nd.owner = t
		t.gradFn, t.outputNr, t.reqGrad = nd, 0, true
	}
	// Under PyTorch's lifetime a node made anew (a view's grad_fn) may
	// have left its old one with no one referring to it.
	return first(err, e.takePending(), e.life.rebased())
}

// copySlices rebases the base of view t after the in-place op of node
// op (inputs t and o): the base's grad_fn becomes CopySlices, whose
// inputs are the base's old history and o, and which runs op on the
// view's part of the base's gradient. The view's grad_fn is made anew
// from the base at its next use (Tensor.fn).
func (e *Engine) copySlices(t, o *Tensor, op *node) error {
	b := t.base
	ins := []*Tensor{b}
	if o != nil {
		ins = append(ins, o)
	}
	off, k := t.off-b.off, t.Numel()
	cs := e.newNode("torch::autograd::CopySlices", ins, nil) // its name(), as PyTorch's messages say it
	cs.saved, cs.owner, cs.oneShot = op.saved, b, true
	cs.apply = func(g []float64, sv [][]float64) [][]float64 {
		res := append([]float64(nil), g...)
		r := op.apply(append([]float64(nil), g[off:off+k]...), sv)
		copy(res[off:], r[0])
		out := [][]float64{res}
		if o != nil {
			out = append(out, r[1])
		}
		return out
	}
	b.gradFn, b.outputNr, b.reqGrad = cs, 0, true
	t.reqGrad = true
	t.attrVersion = -1 // made anew at its next use, from CopySlices
	return nil
}
