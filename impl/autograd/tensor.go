package autograd

import (
	"fmt"

	"github.com/tlcheck/tlcheck/traces"
)

// storage is one buffer of float64s, an object of the runtime. Its
// values live here; the runtime keeps its count and address.
type storage struct {
	addr traces.Addr
	data []float64
	// restored is 1 + the version whose values a recompute wrote back
	// (cleared by the next in-place op); 0: the values are the
	// counter's version.
	restored int
	saved    []*saved // the live checkpointed saved tensors of this storage
}

// counter is a version counter: one per storage, shared by a base, its
// views and Detach; Data makes a fresh one.
type counter struct {
	v    int
	data bool // made by Data: its in-place ops are not autograd's, and no bump is recorded
}

// Tensor is a handle on (part of) a storage: a base, a view, a detached
// alias or a data alias. Each live handle holds one runtime reference to
// its storage. A tensor outside any graph (a leaf, or one made without
// grad) holds it through a record in the scope that made it and dies at
// that scope's exit; a graph tensor (one with a grad_fn) holds it
// without a record, and the graph engine releases it. Under PyTorch's
// lifetime no handle has a record: the program holds the tensor until
// Drop or its scope's exit, and it dies once nothing refers to it (see
// Config.Lifetime).
type Tensor struct {
	e        *Engine
	id       int
	st       *storage
	off      int   // first element in st
	shape    []int // contiguous, row-major
	vc       *counter
	reqGrad  bool
	gradFn   *node // nil for a leaf
	outputNr int
	base     *Tensor // the tensor this is a view of; nil for a base
	// A differentiable view (Reshape, Slice) keeps the version its
	// grad_fn was made at: after an in-place op on its storage group
	// the grad_fn is made anew (see fn).
	diffView    bool
	attrVersion int
	noGradView  bool // a view made under NoGrad (a leaf, if its base requires grad)
	detached    bool // made by Detach
	grad        *Tensor
	retain      bool // RetainGrad: a non-leaf that keeps its grad
	graph       bool // owned by the graph, not by a scope
	dead        bool
	// LifetimePyTorch: held while the program holds it (an op's
	// result, until Drop or its scope's exit); dropped once Drop gave
	// it up, after which the program cannot use it.
	held, dropped bool
	isGrad        bool // a grad: its tensor owns it
}

// Leaf makes a leaf tensor of the given shape and values (copied; nil
// for zeros), in the top scope: it dies at that scope's exit (under
// PyTorch's lifetime, the program's reference goes then, or at Drop).
func (e *Engine) Leaf(shape []int, values []float64, requiresGrad bool) (*Tensor, error) {
	n := numel(shape)
	if values != nil && len(values) != n {
		return nil, &Error{Op: "tensor", Msg: fmt.Sprintf("%d values for shape %v (%d elements)", len(values), shape, n)}
	}
	t, err := e.fresh("tensor", shape)
	if err != nil {
		return nil, err
	}
	copy(t.st.data, values)
	t.reqGrad = requiresGrad
	if requiresGrad {
		e.emit(traces.Event{Op: traces.OpLeafGrad, Addr: t.st.addr})
	}
	return t, e.rt.Write(t.st.addr, uint64(8*n), "")
}

// Scalar makes a zero-dimensional leaf (shape []) that does not require
// grad: a constant, as torch.tensor(v).
func (e *Engine) Scalar(v float64) (*Tensor, error) {
	return e.Leaf([]int{}, []float64{v}, false)
}

// fresh makes a new base tensor with a new storage and counter, outside
// any graph: its buffer has a record in the top scope.
func (e *Engine) fresh(op string, shape []int) (*Tensor, error) {
	st, err := e.newStorage(op, numel(shape))
	if err != nil {
		return nil, err
	}
	e.nextID++
	t := &Tensor{e: e, id: e.nextID, st: st, shape: append([]int(nil), shape...), vc: &counter{}}
	e.register(t)
	if err := e.life.made(t, true); err != nil {
		return nil, &Error{Op: op, Tensor: t.id, Msg: err.Error()}
	}
	return t, nil
}

// ID returns the tensor's number, from 1 in the order made; errors name it.
func (t *Tensor) ID() int { return t.id }

// Shape returns a copy of the tensor's shape.
func (t *Tensor) Shape() []int { return append([]int(nil), t.shape...) }

// Numel returns the number of elements.
func (t *Tensor) Numel() int { return numel(t.shape) }

// RequiresGrad reports whether gradients flow to or through the tensor.
func (t *Tensor) RequiresGrad() bool { return t.requiresGrad() }

// requiresGrad is PyTorch's requires_grad: a view's grad_fn made anew
// first, and a differentiable view requires grad if its base does.
func (t *Tensor) requiresGrad() bool {
	t.fn()
	return t.reqGrad || t.diffView && t.base.reqGrad
}

// IsLeaf reports whether the tensor has no grad_fn.
func (t *Tensor) IsLeaf() bool { return t.fn() == nil }

// GradFn returns the name of the node that made the tensor
// ("MulBackward0"), "" for a leaf.
func (t *Tensor) GradFn() string {
	fn := t.fn()
	if fn == nil {
		return ""
	}
	return fn.name
}

// fn returns t's grad_fn. A differentiable view whose storage group was
// written in place since its grad_fn was made gets a new one, as
// PyTorch's VariableHooks::grad_fn makes it: AsStridedBackward0, whose
// input is the base as it is now, so that the gradient flows through
// the in-place op on the base (h.mul_(3) after v = h[0:2]: v's gradient
// is tripled). The view stays a handle of the node that made it, which
// the new node keeps (replaced) for the graph that frees it to free.
func (t *Tensor) fn() *node {
	if !t.diffView || t.dead || t.vc.v == t.attrVersion || t.noGradView {
		// A view made under NoGrad keeps none: PyTorch refuses its use
		// in grad mode once stale (see use).
		return t.gradFn
	}
	b := t.base
	if t.gradFn == nil && !b.reqGrad {
		return nil
	}
	off, n := t.off-b.off, b.Numel()
	nd := t.e.newNode("AsStridedBackward0", []*Tensor{b}, func(g []float64, _ [][]float64) [][]float64 {
		out := make([]float64, n)
		copy(out[off:], g)
		return [][]float64{out}
	})
	nd.view, nd.replaced = t, t.gradFn
	t.gradFn, t.outputNr, t.reqGrad, t.attrVersion = nd, 0, true, t.vc.v
	return nd
}

// Version returns the version counter of the tensor's storage group.
func (t *Tensor) Version() int { return t.vc.v }

// holds returns the version whose values the tensor's storage holds: its
// counter's, unless a recompute wrote an older version's values back.
func (t *Tensor) holds() int {
	if t.st.restored > 0 && !t.vc.data {
		return t.st.restored - 1
	}
	return t.vc.v
}

// Addr returns the runtime address of the tensor's first element.
func (t *Tensor) Addr() traces.Addr { return t.st.addr + traces.Addr(8*t.off) }

// Alive reports whether the handle is still usable: not freed, and not
// dropped (LifetimePyTorch).
func (t *Tensor) Alive() bool { return !t.dead && !t.dropped }

// Values reads the tensor's values (a copy), recording the read.
func (t *Tensor) Values() ([]float64, error) {
	if err := t.check("values"); err != nil {
		return nil, err
	}
	return t.read(), nil
}

// Item returns the value of a one-element tensor.
func (t *Tensor) Item() (float64, error) {
	if err := t.check("item"); err != nil {
		return 0, err
	}
	if t.Numel() != 1 {
		return 0, &Error{Op: "item", Tensor: t.id, Msg: fmt.Sprintf("a Tensor with %d elements cannot be converted to Scalar", t.Numel())}
	}
	return t.read()[0], nil
}

// Grad returns the tensor's grad, nil when it has none (never computed,
// or cleared by ZeroGrad).
func (t *Tensor) Grad() *Tensor { return t.grad }

// RetainGrad makes a non-leaf keep its grad at backward (a leaf keeps
// its own already). A tensor that does not require grad is refused, as
// PyTorch's retain_grad refuses it (MsgRetainGradNoGrad).
func (t *Tensor) RetainGrad() error {
	if err := t.check("retain_grad"); err != nil {
		return err
	}
	if !t.requiresGrad() {
		return &Error{Op: "retain_grad", Tensor: t.id, Msg: MsgRetainGradNoGrad}
	}
	t.retain = true
	return nil
}

// read records a read of the tensor's bytes and returns its values.
func (t *Tensor) read() []float64 {
	n := t.Numel()
	_ = t.e.rt.Read(t.Addr(), uint64(8*n), "")
	return append([]float64(nil), t.st.data[t.off:t.off+n]...)
}

// write stores vals into the tensor, recording the write.
func (t *Tensor) write(vals []float64) {
	_ = t.e.rt.Write(t.Addr(), uint64(8*len(vals)), "")
	copy(t.st.data[t.off:], vals)
}

// check refuses a dead handle.
func (t *Tensor) check(op string) error {
	if t == nil {
		return &Error{Op: op, Msg: "a nil tensor"}
	}
	if t.dropped {
		return &Error{Op: op, Tensor: t.id, Msg: "the tensor was dropped"}
	}
	if t.e.life.unreachable(t) {
		// Alive for a view or a node that refers to it, but out of the
		// program's reach, as a Python function's local after it returned.
		return &Error{Op: op, Tensor: t.id, Msg: "the program holds no reference to the tensor: its scope exited"}
	}
	if t.dead {
		return &Error{Op: op, Tensor: t.id, Msg: "the tensor was freed (its scope exited, or its graph was freed by backward, detach or FreeGraph)"}
	}
	return nil
}

// use is check for an op that, in grad mode, asks for the tensor's
// grad_fn: a view made under NoGrad whose group was written in place
// since is refused then (PyTorch's handle_view_on_rebase, indirect).
func (t *Tensor) use(op string) error {
	if err := t.check(op); err != nil {
		return err
	}
	if t.e.noGrad == 0 && t.noGradView && t.base.reqGrad && t.vc.v != t.attrVersion {
		return &Error{Op: op, Tensor: t.id, Msg: MsgNoGradViewRebased}
	}
	return nil
}

// alias makes a new handle on t's storage: it acquires the buffer and
// records it in the top scope, so the alias dies at that scope's exit
// (under PyTorch's lifetime, when nothing refers to it: no record).
func (t *Tensor) alias(op string, off int, shape []int, vc *counter) (*Tensor, error) {
	e := t.e
	err := first(e.rt.Acquire(t.st.addr), e.life.recordAlias(t.st.addr))
	if err != nil {
		return nil, &Error{Op: op, Tensor: t.id, Msg: err.Error()}
	}
	e.nextID++
	a := &Tensor{e: e, id: e.nextID, st: t.st, off: off, shape: append([]int(nil), shape...), vc: vc}
	e.register(a)
	_ = e.life.made(a, false) // no record to remove: fails never
	return a, nil
}

// Reshape returns a view of t with another shape of as many elements,
// sharing t's storage and version counter (ViewBackward0).
func (t *Tensor) Reshape(shape ...int) (*Tensor, error) {
	if err := t.use("reshape"); err != nil {
		return nil, err
	}
	if numel(shape) != t.Numel() {
		return nil, &Error{Op: "reshape", Tensor: t.id, Msg: fmt.Sprintf("shape '%s' is invalid for input of size %d", shapeString(shape), t.Numel())}
	}
	return t.view("reshape", "ViewBackward0", t.off, shape, func(g []float64) []float64 { return g })
}

// Slice returns rows lo..hi-1 of t (elements, for a 1-D t) as a view
// sharing t's storage and version counter (SliceBackward0).
func (t *Tensor) Slice(lo, hi int) (*Tensor, error) {
	if err := t.use("slice"); err != nil {
		return nil, err
	}
	if len(t.shape) == 0 {
		return nil, &Error{Op: "slice", Tensor: t.id, Msg: MsgSliceZeroDim}
	}
	if lo < 0 || hi > t.shape[0] || lo >= hi {
		return nil, &Error{Op: "slice", Tensor: t.id, Msg: fmt.Sprintf("slice [%d:%d] out of range for shape %v", lo, hi, t.shape)}
	}
	row := t.Numel() / t.shape[0]
	shape := append([]int{hi - lo}, t.shape[1:]...)
	n := t.Numel()
	return t.view("slice", "SliceBackward0", t.off+lo*row, shape, func(g []float64) []float64 {
		out := make([]float64, n)
		copy(out[lo*row:], g)
		return out
	})
}

// view makes a view of t. A view of a tensor that requires grad is in
// the graph: a node maps its grad back to t's shape.
func (t *Tensor) view(op, name string, off int, shape []int, back func([]float64) []float64) (*Tensor, error) {
	v, err := t.alias(op, off, shape, t.vc)
	if err != nil {
		return nil, err
	}
	if e := t.e; e.has(FaultAutogradViewOwnVersion) {
		v.vc = &counter{v: t.vc.v}
	}
	v.base = t.root()
	v.diffView, v.attrVersion = true, v.vc.v
	t.fn() // a view's grad_fn made anew first: it may now require grad
	switch {
	case t.e.noGrad > 0:
		// PyTorch: a view made under no_grad of a tensor that requires
		// grad requires grad too, as a leaf; a recorded in-place op on
		// any view made under no_grad is refused (MsgNoGradViewInPlace).
		v.reqGrad, v.noGradView = t.requiresGrad(), true
	case !t.requiresGrad():
	default:
		n := t.e.newNode(name, []*Tensor{t}, func(g []float64, _ [][]float64) [][]float64 { return [][]float64{back(g)} })
		if err := t.e.attach(op, v, n); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// root returns the base tensor of a view chain.
func (t *Tensor) root() *Tensor {
	if t.base != nil {
		return t.base
	}
	return t
}

// Detach returns a tensor outside any graph sharing t's storage and
// version counter, as PyTorch's detach does. Hybrid cleanup: it also
// frees the graph upstream of t (t included), whose job is over; under
// PyTorch's lifetime it frees nothing.
func (t *Tensor) Detach() (*Tensor, error) {
	if err := t.check("detach"); err != nil {
		return nil, err
	}
	d, err := t.alias("detach", t.off, t.shape, t.vc)
	if err != nil {
		return nil, err
	}
	d.detached = true
	if t.fn() != nil {
		return d, t.e.life.detached(t)
	}
	return d, nil
}

// Data returns PyTorch's .data: an alias of t's storage outside any
// graph with a version counter of its own, so in-place ops through it
// are invisible to autograd's checks.
func (t *Tensor) Data() (*Tensor, error) {
	if err := t.check("data"); err != nil {
		return nil, err
	}
	return t.alias("data", t.off, t.shape, &counter{data: true})
}

func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}
