package autograd

import (
	"errors"
	"slices"
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// node is a backward function: one per differentiable op (PyTorch's
// Node). It keeps the tensors its formula needs (saved), where each
// input's gradient goes (next), and the graph tensors its op made, which
// the graph engine frees.
type node struct {
	name    string
	seq     int // PyTorch's sequence_nr: nodes made later run first
	next    []edge
	saved   []*saved
	apply   func(g []float64, sv [][]float64) [][]float64
	handles []*Tensor // graph tensors this node made; freed with the graph
	freed   bool      // the graph around this node was freed
	// oneShot: run again once its saved tensors were released (a
	// backward without retain_graph ran it), the node refuses, saved
	// tensors or not, as PyTorch's CopySlices does (its fn released).
	oneShot, spent bool
	// replaced is the grad_fn a view had before this node was made for
	// it anew (see Tensor.fn): no gradient flows to it, but the graph
	// tensors it made (the views the view was made through) are freed
	// with this node's graph.
	replaced *node
	view     *Tensor // the view this node was made anew for, if it was
	// addr is the node's runtime object under PyTorch's lifetime (see
	// nodeObject); 0 under TensorLogic's.
	addr traces.Addr
	// owner is the tensor an in-place op rebased onto this node (the
	// base, for CopySlices): no graph tensor of its own, and no graph
	// need lead to it, so the owner's death frees it (see dropInPlace).
	owner *Tensor

	// For a recompute: the op's inputs, the versions they held when it
	// ran, its output and how to compute it again from the inputs'
	// values (nil for views and in-place ops, which cannot be redone).
	ins   []*Tensor
	inVer []int
	out   *Tensor
	redo  func(ins [][]float64) []float64
}

// edge is where the gradient of one input goes: the node that made it,
// or the leaf that accumulates it, or nowhere (an input without grad).
type edge struct {
	fn   *node
	leaf *Tensor
}

// saved is a tensor a node keeps for backward (PyTorch's SavedVariable):
// it holds a runtime reference to the storage and the version it was
// saved at.
type saved struct {
	name     string // its name in the trace: "s1", "s2", ...
	t        *Tensor
	version  int
	output   bool // the node's own output (relu, exp, tanh save theirs)
	released bool
	ckpt     bool  // saved under Checkpoint: snapshot, restore, recompute
	producer *node // the node whose output t is, if it can be redone
	snap     *snap // its snapshot, taken before an in-place op wrote its storage
}

// snap is a snapshot of a storage: a runtime buffer holding a copy of
// its values at one version, owned by the saved tensor it was taken for
// and released with it.
type snap struct {
	addr    traces.Addr
	data    []float64
	version int
}

// newNode makes a node whose inputs are ins, in order.
func (e *Engine) newNode(name string, ins []*Tensor, apply func([]float64, [][]float64) [][]float64) *node {
	e.nodes++
	n := &node{name: name, seq: e.nodes, apply: apply, next: make([]edge, len(ins)), ins: ins, inVer: make([]int, len(ins))}
	for i, t := range ins {
		n.inVer[i] = t.holds()
		switch fn := t.fn(); {
		case !t.requiresGrad():
		case fn == nil && t.noGradView:
			// PyTorch: a view made under no_grad, a leaf, accumulates
			// no gradient, neither its own nor its base's.
		case fn != nil:
			n.next[i] = edge{fn: fn}
		default:
			n.next[i] = edge{leaf: t}
		}
	}
	e.nodeObject(n)
	return n
}

// save makes n keep t, at t's current version; it returns the index of
// the saved values in apply's sv.
func (e *Engine) save(n *node, t *Tensor, output bool) (int, error) {
	if err := e.rt.Acquire(t.st.addr); err != nil {
		return 0, &Error{Op: n.name, Tensor: t.id, Msg: err.Error()}
	}
	e.saves++
	s := &saved{name: "s" + strconv.Itoa(e.saves), t: t, version: t.holds(), output: output, ckpt: e.ckpt > 0}
	if p := t.gradFn; p != nil && p.redo != nil && p.out == t && s.version == 0 {
		// p made t, a fresh storage at version 0: redoing p gives the
		// values saved only if no write (under NoGrad, which does not
		// rebase t) moved t on before the save.
		s.producer = p
	}
	if s.ckpt {
		t.st.saved = append(t.st.saved, s)
	}
	ev := traces.Event{Op: traces.OpSave, Name: s.name, Addr: t.st.addr}
	if t.vc.data {
		ev.Kind = "data" // .data's counter is its own: the model does not check it
	}
	e.emit(ev)
	n.saved = append(n.saved, s)
	return len(n.saved) - 1, nil
}

// attach makes out the graph tensor n produced; the lifetime says who
// owns its buffer now (TensorLogic's: the graph, not the scope).
func (e *Engine) attach(op string, out *Tensor, n *node) error {
	out.gradFn, out.outputNr, out.reqGrad = n, 0, true
	n.handles = append(n.handles, out)
	err := first(e.takePending(), e.life.attached(out))
	if e.has(FaultAutogradStructRetain) {
		// 4419a90: the tensor is retained struct-style, a reference
		// nobody releases, so the graph's buffers outlive the step.
		err = first(err, e.rt.Acquire(out.st.addr))
	}
	if err != nil {
		return &Error{Op: op, Tensor: out.id, Msg: err.Error()}
	}
	return nil
}

// unpack returns a saved tensor's values, refusing, in PyTorch's words,
// one whose references were released or whose version moved on and that
// a checkpoint can neither restore nor recompute.
func (e *Engine) unpack(n *node, s *saved) ([]float64, error) {
	if s.released {
		return nil, &Error{Op: "backward", Tensor: s.t.id, Msg: MsgSecondBackward}
	}
	sn, redo, ok := e.source(s, (*Tensor).holds)
	switch {
	case !ok:
		return nil, modified(n, s, s.t.holds())
	case sn != nil:
		k := s.t.Numel()
		_ = e.rt.Read(sn.addr+traces.Addr(8*s.t.off), uint64(8*k), "")
		e.emit(traces.Event{Op: traces.OpRestore, Name: s.name, Addr: sn.addr})
		return append([]float64(nil), sn.data[s.t.off:s.t.off+k]...), nil
	case redo:
		p := s.producer
		ins := make([][]float64, len(p.ins))
		for i, in := range p.ins {
			ins[i] = in.read()
		}
		s.t.write(p.redo(ins))
		s.t.st.restored = s.version + 1
		if e.has(FaultAutogradRecomputeCounterVersion) {
			s.t.st.restored = 0 // the storage taken to hold its counter's version
		}
		e.emit(traces.Event{Op: traces.OpRecompute, Name: s.name})
	}
	e.emit(traces.Event{Op: traces.OpUnpack, Name: s.name})
	return s.t.read(), nil
}

// modified is PyTorch's refusal of saved tensor s of node n, whose
// storage holds the values of version v.
func modified(n *node, s *saved, v int) error {
	fn, nr := "", 0
	switch t := s.t; {
	case !s.output && t.noGradView && t.base.reqGrad && t.vc.v != t.attrVersion:
		// PyTorch asks a saved input for its grad_fn to name it: a
		// stale view made under no_grad refuses that first.
		return &Error{Op: "backward", Tensor: t.id, Msg: MsgNoGradViewRebased}
	case s.output:
		fn = n.name
	case t.dead && t.diffView && t.vc.v != t.attrVersion && (t.gradFn != nil || t.base.reqGrad):
		// A view the program let go of: PyTorch's saved variable keeps
		// it, and makes its grad_fn anew to name it, as below.
		fn = "AsStridedBackward0"
	case t.fn() != nil:
		// PyTorch names the tensor's grad_fn at unpack time: a view's
		// made anew (AsStridedBackward0) after an in-place op.
		fn, nr = t.fn().name, t.outputNr
	}
	return &Error{Op: "backward", Tensor: s.t.id, Msg: modifiedMsg(s.t.shape, fn, nr, v, s.version)}
}

// source says where backward reads saved tensor s from, given the
// version each storage's values are at (held): its storage (no snap, no
// redo), a snapshot, or its storage after a recompute; ok is false if
// none has the values of s's version.
func (e *Engine) source(s *saved, held func(*Tensor) int) (sn *snap, redo, ok bool) {
	if held(s.t) == s.version {
		return nil, false, true
	}
	if !s.ckpt {
		return nil, false, false
	}
	if s.snap != nil && s.snap.version == s.version {
		return s.snap, false, true
	}
	p := s.producer
	if p == nil || p.out != s.t {
		return nil, false, false
	}
	for i, in := range p.ins {
		if in.dead || held(in) != p.inVer[i] {
			return nil, false, false
		}
	}
	return nil, true, true
}

// unsnapped returns the checkpointed saved tensors of st still at their
// saved version that have no snapshot yet: those an in-place op on st
// must snapshot first.
func (st *storage) unsnapped() []*saved {
	var due []*saved
	for _, s := range st.saved {
		if s.snap == nil && s.t.holds() == s.version {
			due = append(due, s)
		}
	}
	return due
}

// snapshot copies the storage of t, before an in-place op writes it, for
// each saved tensor of due (see unsnapped), as the snapshot of its saved
// version.
func (e *Engine) snapshot(t *Tensor, due []*saved) error {
	st := t.st
	for _, s := range due {
		if e.has(FaultAutogradSnapshotShallow) {
			// The storage itself, one more reference to it, and no copy:
			// the op about to write the storage writes the snapshot too.
			if err := e.rt.Acquire(st.addr); err != nil {
				return &Error{Op: "snapshot", Tensor: t.id, Msg: err.Error()}
			}
			e.emit(traces.Event{Op: traces.OpSnapshot, Name: s.name, Addr: st.addr})
			s.snap = &snap{addr: st.addr, data: st.data, version: s.version}
			continue
		}
		b, err := e.newStorage("snapshot", len(st.data))
		if err != nil {
			return err
		}
		if err := e.rt.Unregister(b.addr); err != nil {
			return &Error{Op: "snapshot", Tensor: t.id, Msg: err.Error()}
		}
		size := uint64(8 * len(st.data))
		_ = e.rt.Read(st.addr, size, "")
		copy(b.data, st.data)
		_ = e.rt.Write(b.addr, size, "")
		e.emit(traces.Event{Op: traces.OpSnapshot, Name: s.name, Addr: b.addr})
		s.snap = &snap{addr: b.addr, data: b.data, version: s.version}
	}
	return nil
}

// releaseSaved drops n's references to its saved tensors and their
// snapshots.
func (e *Engine) releaseSaved(n *node) error {
	n.spent = true
	var errs []error
	for _, s := range n.saved {
		if s.released {
			continue
		}
		s.released = true
		e.emit(traces.Event{Op: traces.OpUnsave, Name: s.name})
		errs = append(errs, e.rt.Release(s.t.st.addr))
		st := s.t.st
		st.saved = slices.DeleteFunc(st.saved, func(o *saved) bool { return o == s })
		if sn := s.snap; sn != nil {
			s.snap = nil
			if e.has(FaultAutogradSnapshotTableNeverCleared) {
				// cgadimpl: the snapshot stays in a global table that
				// nothing clears; its buffer outlives the graph.
				e.table = append(e.table, sn)
				continue
			}
			errs = append(errs, e.rt.Release(sn.addr))
		}
	}
	return errors.Join(errs...)
}

// dropInPlace releases the saved tensors of the in-place ops rebased
// onto t, which dies: hybrid cleanup frees a graph with the tensors
// that lead to it, and nothing else may lead to these (a backward from
// a tensor made before them does not reach them). A view that dies
// after its base does so for the ops written through it, which
// CopySlices rebased onto the dead base.
func (e *Engine) dropInPlace(t *Tensor) error {
	var errs []error
	owners := []*Tensor{t}
	if t.base != nil && t.base.dead {
		owners = append(owners, t.base)
	}
	for _, o := range owners {
		for n := o.gradFn; n != nil && n.owner == o; n = n.next[0].fn {
			if !n.freed {
				n.freed = true
				errs = append(errs, e.releaseSaved(n))
			}
		}
	}
	return errors.Join(errs...)
}

// kill releases a graph tensor's reference to its buffer.
func (e *Engine) kill(t *Tensor) error {
	if t.dead || !t.graph {
		return nil
	}
	t.dead = true
	errs := []error{e.dropInPlace(t)}
	switch {
	case t.grad == nil:
	case t.retain && len(e.scopes) > 0:
		// retain_grad: the grad outlives the tensor, as in PyTorch,
		// until ZeroGrad or ClearGrads, or the top scope's exit.
		e.register(t)
	default:
		errs = append(errs, e.dropGrad(t))
	}
	return errors.Join(append(errs, e.rt.Release(t.st.addr))...)
}

// order returns the nodes reachable from root, each before every node
// it sends gradient to (reverse post-order of a depth-first walk).
func order(root *node) []*node {
	var post []*node
	seen := map[*node]bool{}
	type frame struct {
		n *node
		i int
	}
	stack := []frame{{root, 0}}
	seen[root] = true
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.i < len(f.n.next) {
			nx := f.n.next[f.i].fn
			f.i++
			if nx != nil && !seen[nx] {
				seen[nx] = true
				stack = append(stack, frame{nx, 0})
			}
			continue
		}
		post = append(post, f.n)
		stack = stack[:len(stack)-1]
	}
	for i, j := 0, len(post)-1; i < j; i, j = i+1, j-1 {
		post[i], post[j] = post[j], post[i]
	}
	return post
}

// upstream returns the nodes reachable from root through edges and
// replaced links: the graph a free frees.
func upstream(root *node) []*node {
	var out []*node
	seen := map[*node]bool{}
	var walk func(*node)
	walk = func(r *node) {
		for _, n := range order(r) {
			if seen[n] {
				continue
			}
			seen[n] = true
			out = append(out, n)
			if n.replaced != nil {
				walk(n.replaced)
			}
		}
	}
	walk(root)
	return out
}

// FreeGraph frees the graph upstream of t, t included (dropping the last
// handle on a loss that will not be backpropagated): every node's saved
// tensors and every graph tensor its op made. A leaf frees nothing. It is
// TensorLogic's lifetime: under PyTorch's it is refused (Drop instead).
func (e *Engine) FreeGraph(t *Tensor) error { return e.life.freeGraph(t) }
