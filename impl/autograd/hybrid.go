package autograd

import (
	"errors"

	"github.com/tlcheck/tlcheck/traces"
)

// hybrid is TensorLogic's lifetime (LifetimeTensorLogic), its hybrid
// cleanup (V5.0): a tensor outside any graph has a record in the scope
// that made it and dies at the scope's exit; a graph tensor has none,
// and the graph engine frees it (backward, Detach, FreeGraph). A refused
// backward changes nothing: precheck finds the refusal before any node
// runs.
type hybrid struct {
	e *Engine
}

func (h *hybrid) kind() Lifetime { return LifetimeTensorLogic }

// made: the tensor's buffer keeps its record in the top scope.
func (h *hybrid) made(*Tensor, bool) error { return nil }

// recordAlias gives the alias a record in the top scope, so it dies at
// that scope's exit.
func (h *hybrid) recordAlias(a traces.Addr) error { return h.e.rt.Register(a) }

// attached takes out's buffer from the scope (unregister: the scope's
// exit will not release it) and gives it to the graph.
func (h *hybrid) attached(out *Tensor) error {
	out.graph = true
	if h.e.has(FaultAutogradScopeFreesGraph) {
		return nil
	}
	return h.e.rt.Unregister(out.st.addr)
}

// savedCopy: the copy belongs to the graph, and its record goes.
func (h *hybrid) savedCopy(c *Tensor) error {
	c.graph = true
	return h.e.rt.Unregister(c.st.addr)
}

// nodeMade: a node is no object of the runtime.
func (h *hybrid) nodeMade(*node) error { return nil }

// unreachable: a tensor is the program's until it dies.
func (h *hybrid) unreachable(*Tensor) bool { return false }

// detached frees the graph upstream of t (t included), whose job is
// over.
func (h *hybrid) detached(t *Tensor) error {
	if h.e.has(FaultAutogradDetachKeepsGraph) {
		return nil
	}
	return h.e.FreeGraph(t)
}

// freeGraph frees every node upstream of t: its saved tensors and every
// graph tensor its op made.
func (h *hybrid) freeGraph(t *Tensor) error {
	if t.fn() == nil {
		return nil
	}
	var errs []error
	for _, n := range upstream(t.fn()) {
		if n.freed {
			continue
		}
		n.freed = true
		errs = append(errs, h.e.releaseSaved(n))
		for _, hd := range n.handles {
			errs = append(errs, h.e.kill(hd))
		}
	}
	return errors.Join(errs...)
}

func (h *hybrid) drop(t *Tensor) error {
	return &Error{Op: "drop", Tensor: t.id, Msg: "Drop is PyTorch's lifetime (Config.Lifetime); TensorLogic's frees a tensor at its scope's exit, or with its graph (backward, Detach, FreeGraph)"}
}

// rebased: the in-place ops rebased onto a tensor release what they
// saved when it dies (see dropInPlace).
func (h *hybrid) rebased() error { return nil }

// beforeBackward is the atomic backward: a refusal is found before any
// node runs (see precheck).
func (h *hybrid) beforeBackward(t *Tensor, nodes []*node) error { return h.e.precheck(t, nodes) }

// afterBackward frees the graph's non-leaf intermediates, unless
// retain_graph.
func (h *hybrid) afterBackward(t *Tensor, retainGraph bool, err error) error {
	if !retainGraph {
		err = errors.Join(err, h.e.freeIntermediates(t))
	}
	return err
}

func (h *hybrid) runsGradless() bool { return false }

// scopeExit frees the scope's tensors outside any graph, with their
// grads; a graph tensor's scope release is a no-op, since the graph
// engine frees it. The buffers of the dying tensors are released by the
// runtime's own scope exit, through the records they were made with.
func (h *hybrid) scopeExit(top []*Tensor) error {
	e := h.e
	var errs []error
	for i := len(top) - 1; i >= 0; i-- {
		t := top[i]
		if t.dead || t.graph {
			if t.dead && t.grad != nil {
				errs = append(errs, e.dropGrad(t)) // a retained grad (see kill)
			}
			continue
		}
		t.dead = true
		errs = append(errs, e.dropInPlace(t))
		if t.grad != nil {
			errs = append(errs, e.dropGrad(t))
		}
	}
	errs = append(errs, e.rt.ScopeExit())
	return errors.Join(errs...)
}

// end: graphs still alive are the model's to report, as leaks.
func (h *hybrid) end() error { return h.e.rt.End() }
