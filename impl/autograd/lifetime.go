package autograd

import (
	"errors"
	"slices"
)

// PyTorch's lifetime (LifetimePyTorch) is Python's reference counting
// over the graph: what refers to what is
//
//	the program -> each tensor it holds (an op's result, until Drop or its scope's exit)
//	a tensor    -> its grad_fn, its view base, its grad
//	a node      -> the nodes and leaves its edges lead to (a leaf's AccumulateGrad), its saved tensors
//
// and a tensor, node or saved tensor is freed once nothing refers to it.
// The graph is acyclic, so reference counting frees exactly what a walk
// from the program's tensors does not reach: collect is that walk, run
// whenever a reference may have gone (Drop, a scope's exit, End, an
// in-place op that rebased a history, a backward). Every buffer lives in
// the runtime without a scope record; a tensor holds one reference to its
// storage, a saved tensor one more, a node one to an object of its own
// (nodeBytes) so that the trace shows the node's life too.

// nodeBytes is the size of the runtime object that stands for a node
// under PyTorch's lifetime.
const nodeBytes = 16

// Drop gives up the program's reference to t, as Python's del does
// (LifetimePyTorch only): t is freed now unless a view of it or a node
// still refers to it, and with it whatever only t kept alive (its grad,
// its grad_fn and the graph upstream, their saved tensors). t cannot be
// used afterwards. Dropping a tensor twice, or a grad (which belongs to
// its tensor: see ZeroGrad), is refused; under TensorLogic's lifetime,
// which frees by scope and graph, so is every Drop.
func (t *Tensor) Drop() error {
	if t == nil {
		return &Error{Op: "drop", Msg: "a nil tensor"}
	}
	e := t.e
	switch {
	case !e.pytorch:
		return &Error{Op: "drop", Tensor: t.id, Msg: "Drop is PyTorch's lifetime (Config.Lifetime); TensorLogic's frees a tensor at its scope's exit, or with its graph (backward, Detach, FreeGraph)"}
	case t.dropped:
		return &Error{Op: "drop", Tensor: t.id, Msg: "the tensor was dropped already"}
	case !t.held:
		return &Error{Op: "drop", Tensor: t.id, Msg: "the program holds no reference to the tensor: its scope exited, or it is a grad, which belongs to its tensor (ZeroGrad sets it to none)"}
	}
	t.held, t.dropped = false, true
	if e.has(FaultAutogradDropKeepsGradFn) && t.gradFn != nil {
		// The dropped tensor's grad_fn keeps one more reference, which
		// nothing gives back: the node and what it leads to never die.
		e.pinned = append(e.pinned, t.gradFn)
	}
	return e.collect()
}

// track adds a tensor the program holds (an op's result) to those
// collect sweeps: its buffer reference is released when it dies, not by
// a scope's exit, so the buffer's record is removed.
func (e *Engine) track(t *Tensor, fresh bool) error {
	t.held = true
	e.alive = append(e.alive, t)
	if fresh {
		return e.rt.Unregister(t.st.addr)
	}
	return nil
}

// nodeObject gives n, a node of the graph, its runtime object under
// PyTorch's lifetime; an error is kept for the op that made the node
// (see takePending).
func (e *Engine) nodeObject(n *node) {
	if !e.pytorch {
		return
	}
	e.graph = append(e.graph, n)
	a, err := e.rt.Alloc(nodeBytes)
	if err == nil {
		err = e.rt.Unregister(a)
	}
	n.addr = a
	if err != nil && e.pending == nil {
		e.pending = &Error{Op: n.name, Msg: "allocating the node: " + err.Error()}
	}
}

// takePending returns and clears the error of a node made since the last
// call (see nodeObject).
func (e *Engine) takePending() error {
	err := e.pending
	e.pending = nil
	return err
}

// collect frees, under PyTorch's lifetime, every tensor and node that
// nothing refers to any more (see the comment at the top of this file):
// tensors first, newest first (a tensor releases its storage and its
// grad), then nodes, newest first (a node releases its saved tensors and
// its object). Under TensorLogic's lifetime it does nothing.
func (e *Engine) collect() error {
	if !e.pytorch {
		return nil
	}
	liveT, liveN := e.reachable()
	var errs []error
	for i := len(e.alive) - 1; i >= 0; i-- {
		t := e.alive[i]
		if liveT[t] || t.dead { // dead already: a saved copy (see saveCopy)
			continue
		}
		t.dead = true
		if t.grad != nil {
			errs = append(errs, e.dropGrad(t))
		}
		errs = append(errs, e.rt.Release(t.st.addr))
	}
	for i := len(e.graph) - 1; i >= 0; i-- {
		if n := e.graph[i]; !liveN[n] {
			n.freed = true
			errs = append(errs, e.releaseSaved(n), e.rt.Release(n.addr))
		}
	}
	e.alive = slices.DeleteFunc(e.alive, func(t *Tensor) bool { return !liveT[t] })
	e.graph = slices.DeleteFunc(e.graph, func(n *node) bool { return !liveN[n] })
	return errors.Join(errs...)
}

// reachable walks the references from the program's tensors (and the
// nodes a fault keeps) and returns the tensors and nodes it reaches:
// those alive.
func (e *Engine) reachable() (map[*Tensor]bool, map[*node]bool) {
	liveT := make(map[*Tensor]bool, len(e.alive))
	liveN := make(map[*node]bool, len(e.graph))
	var tensors []*Tensor
	for _, t := range e.alive {
		if t.held {
			tensors = append(tensors, t)
		}
	}
	nodes := slices.Clone(e.pinned)
	if e.has(FaultAutogradSavedOutputCycle) {
		for _, n := range e.graph {
			if n.savesOutput() {
				nodes = append(nodes, n)
			}
		}
	}
	for len(tensors) > 0 || len(nodes) > 0 {
		if k := len(tensors); k > 0 {
			t := tensors[k-1]
			tensors = tensors[:k-1]
			if liveT[t] {
				continue
			}
			liveT[t] = true
			if t.gradFn != nil {
				nodes = append(nodes, t.gradFn)
			}
			if t.base != nil {
				tensors = append(tensors, t.base)
			}
			continue
		}
		n := nodes[len(nodes)-1]
		nodes = nodes[:len(nodes)-1]
		if liveN[n] {
			continue
		}
		liveN[n] = true
		for _, ed := range n.next {
			if ed.fn != nil {
				nodes = append(nodes, ed.fn)
			}
			if ed.leaf != nil {
				tensors = append(tensors, ed.leaf)
			}
		}
	}
	return liveT, liveN
}

// savesOutput reports whether n keeps its own output among its saved
// tensors, not yet released: the cycle of FaultAutogradSavedOutputCycle.
func (n *node) savesOutput() bool {
	for _, s := range n.saved {
		if s.output && !s.released {
			return true
		}
	}
	return false
}

// dropScope gives up, under PyTorch's lifetime, the program's references
// to the tensors a scope made (a Python function's locals at its
// return), and frees what they alone kept alive.
func (e *Engine) dropScope(made []*Tensor) error {
	for _, t := range made {
		t.held = false
	}
	return e.collect()
}

// dropAll gives up every reference the program still holds: End's, under
// PyTorch's lifetime.
func (e *Engine) dropAll() error {
	for _, t := range e.alive {
		t.held = false
	}
	return e.collect()
}
