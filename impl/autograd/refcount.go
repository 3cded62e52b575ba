package autograd

import (
	"errors"
	"slices"

	"github.com/tlcheck/tlcheck/traces"
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

// refCount is PyTorch's lifetime: it keeps every tensor and node not yet
// freed, for collect to sweep.
type refCount struct {
	e      *Engine
	alive  []*Tensor // oldest first
	graph  []*node   // oldest first
	pinned []*node   // FaultAutogradDropKeepsGradFn: nodes a dropped tensor never let go of
}

func (r *refCount) kind() Lifetime { return LifetimePyTorch }

// made tracks t, a tensor the program holds: its buffer reference is
// released when it dies, not by a scope's exit, so a fresh buffer's
// record is removed (an alias was given none).
func (r *refCount) made(t *Tensor, fresh bool) error {
	t.held = true
	r.alive = append(r.alive, t)
	if fresh {
		return r.e.rt.Unregister(t.st.addr)
	}
	return nil
}

func (r *refCount) recordAlias(traces.Addr) error { return nil }

// attached leaves out's buffer without a record; the bug gives a graph
// tensor one, whose scope's exit releases the reference that the
// tensor's death releases again.
func (r *refCount) attached(out *Tensor) error {
	out.graph = false
	if r.e.has(FaultAutogradScopeFreesGraph) {
		return r.e.rt.Register(out.st.addr)
	}
	return nil
}

// savedCopy: the copy's buffer has no record already.
func (r *refCount) savedCopy(c *Tensor) error {
	c.graph = false
	return nil
}

// nodeMade gives n its runtime object.
func (r *refCount) nodeMade(n *node) error {
	r.graph = append(r.graph, n)
	a, err := r.e.rt.Alloc(nodeBytes)
	if err == nil {
		err = r.e.rt.Unregister(a)
	}
	n.addr = a
	if err != nil {
		return &Error{Op: n.name, Msg: "allocating the node: " + err.Error()}
	}
	return nil
}

// unreachable: alive for a view or a node that refers to it, but out of
// the program's reach, as a Python function's local after it returned.
func (r *refCount) unreachable(t *Tensor) bool { return !t.held && !t.isGrad && !t.dead }

// detached: Detach frees nothing.
func (r *refCount) detached(*Tensor) error { return nil }

func (r *refCount) freeGraph(t *Tensor) error {
	return &Error{Op: "free_graph", Tensor: t.id, Msg: "FreeGraph is TensorLogic's lifetime; under PyTorch's a graph is freed when nothing refers to it: Drop its tensors"}
}

func (r *refCount) drop(t *Tensor) error {
	switch {
	case t.dropped:
		return &Error{Op: "drop", Tensor: t.id, Msg: "the tensor was dropped already"}
	case !t.held:
		return &Error{Op: "drop", Tensor: t.id, Msg: "the program holds no reference to the tensor: its scope exited, or it is a grad, which belongs to its tensor (ZeroGrad sets it to none)"}
	}
	t.held, t.dropped = false, true
	if r.e.has(FaultAutogradDropKeepsGradFn) && t.gradFn != nil {
		// The dropped tensor's grad_fn keeps one more reference, which
		// nothing gives back: the node and what it leads to never die.
		r.pinned = append(r.pinned, t.gradFn)
	}
	return r.collect()
}

// rebased: a node made anew (a view's grad_fn) may have left its old one
// with no one referring to it.
func (r *refCount) rebased() error { return r.collect() }

// beforeBackward refuses nothing ahead: a refusal stops the walk at the
// node that fails, after the nodes before it ran.
func (r *refCount) beforeBackward(*Tensor, []*node) error { return nil }

// afterBackward frees what the backward released the last reference to.
func (r *refCount) afterBackward(_ *Tensor, _ bool, err error) error {
	if cerr := r.collect(); cerr != nil {
		return errors.Join(err, cerr)
	}
	return err
}

func (r *refCount) runsGradless() bool { return true }

// scopeExit gives up the program's references to the tensors the scope
// made (a Python function's locals at its return), and frees what they
// alone kept alive.
func (r *refCount) scopeExit(top []*Tensor) error {
	for _, t := range top {
		t.held = false
	}
	return errors.Join(r.collect(), r.e.rt.ScopeExit())
}

// end gives up every reference the program still holds, which frees
// every tensor, node and saved tensor (the program is over, as a Python
// process exiting).
func (r *refCount) end() error {
	for _, t := range r.alive {
		t.held = false
	}
	return errors.Join(r.collect(), r.e.rt.End())
}

// collect frees every tensor and node that nothing refers to any more
// (see the comment at the top of this file): tensors first, newest first
// (a tensor releases its storage and its grad), then nodes, newest first
// (a node releases its saved tensors and its object).
func (r *refCount) collect() error {
	e := r.e
	liveT, liveN := r.reachable()
	var errs []error
	for i := len(r.alive) - 1; i >= 0; i-- {
		t := r.alive[i]
		if liveT[t] || t.dead { // dead already: a saved copy (see saveCopy)
			continue
		}
		t.dead = true
		if t.grad != nil {
			errs = append(errs, e.dropGrad(t))
		}
		errs = append(errs, e.rt.Release(t.st.addr))
	}
	for i := len(r.graph) - 1; i >= 0; i-- {
		if n := r.graph[i]; !liveN[n] {
			n.freed = true
			errs = append(errs, e.releaseSaved(n), e.rt.Release(n.addr))
		}
	}
	r.alive = slices.DeleteFunc(r.alive, func(t *Tensor) bool { return !liveT[t] })
	r.graph = slices.DeleteFunc(r.graph, func(n *node) bool { return !liveN[n] })
	return errors.Join(errs...)
}

// reachable walks the references from the program's tensors (and the
// nodes a fault keeps) and returns the tensors and nodes it reaches:
// those alive.
func (r *refCount) reachable() (map[*Tensor]bool, map[*node]bool) {
	liveT := make(map[*Tensor]bool, len(r.alive))
	liveN := make(map[*node]bool, len(r.graph))
	var tensors []*Tensor
	for _, t := range r.alive {
		if t.held {
			tensors = append(tensors, t)
		}
	}
	nodes := slices.Clone(r.pinned)
	if r.e.has(FaultAutogradSavedOutputCycle) {
		for _, n := range r.graph {
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
