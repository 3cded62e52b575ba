package autograd

import (
	"container/heap"
	"errors"
	"fmt"

	"github.com/tlcheck/tlcheck/traces"
)

// Backward computes the gradient of root, a one-element tensor, with
// respect to every leaf that requires grad in its graph, accumulating
// into their Grad, in PyTorch's order (see schedule): so a refusal
// names the saved tensor PyTorch names, and sums add in its order. A
// leaf's gradient is added to its Grad as soon as every node that sends
// it gradient has run (PyTorch's AccumulateGrad, which runs first once
// ready).
//
// Every saved tensor a node needs is unpacked before it runs: one
// released by an earlier backward fails with MsgSecondBackward, one
// modified in place since it was saved fails with PyTorch's
// saved-variable message, unless it was checkpointed and a snapshot or a
// recompute gives it back (see Engine.Checkpoint). Under TensorLogic's
// lifetime every saved tensor the walk will unpack is checked before
// anything runs, so a refused backward changes nothing. Under PyTorch's,
// as in PyTorch, the nodes run one by one and a refusal stops the walk
// at the node that failed: the nodes before it have run (the leaves
// they completed hold their gradient, and they released their saved
// tensors unless retainGraph); the failing node and those after it keep
// theirs.
//
// Without retainGraph each node releases its saved tensors once it has
// run. Under TensorLogic's lifetime the graph's non-leaf intermediates
// are then freed (hybrid cleanup); root itself stays, handed to the top
// scope, so that its value can still be read and a second backward
// through nodes that saved nothing runs again. Under PyTorch's the graph
// lives on while anything refers to it. With retainGraph nothing is
// released.
func (t *Tensor) Backward(retainGraph bool) error {
	e := t.e
	if err := t.use("backward"); err != nil {
		return err
	}
	if !t.requiresGrad() {
		return &Error{Op: "backward", Tensor: t.id, Msg: MsgNoGrad}
	}
	if t.Numel() != 1 {
		return &Error{Op: "backward", Tensor: t.id, Msg: MsgNotScalar}
	}
	if len(e.scopes) == 0 {
		return &Error{Op: "backward", Tensor: t.id, Msg: "no scope is open for the gradient buffers"}
	}
	root := t.fn()
	if root == nil && t.noGradView {
		// A view made under NoGrad requires grad through its base but is a
		// leaf without a grad accumulator of its own: PyTorch finds no
		// gradient edge for it (run_backward).
		return &Error{Op: "backward", Tensor: t.id, Msg: MsgNoGrad}
	}
	if root == nil {
		return e.accumulate(t, []float64{1})
	}
	nodes := schedule(root)
	if err := e.life.beforeBackward(t, nodes); err != nil {
		return err
	}
	return e.life.afterBackward(t, retainGraph, e.run(root, nodes, retainGraph))
}

// precheck is TensorLogic's atomic backward: it walks the saved tensors
// of nodes in the order backward unpacks them, following the recomputes
// it would make (a recompute writes an older version's values into a
// storage that another saved tensor may need at its own version), and
// returns the refusal backward would meet, before anything runs.
func (e *Engine) precheck(t *Tensor, nodes []*node) error {
	recomputed := map[*storage]int{}
	held := func(x *Tensor) int {
		if v, ok := recomputed[x.st]; ok {
			return v
		}
		return x.holds()
	}
	for _, n := range nodes {
		if n.oneShot && n.spent {
			return n.secondBackward()
		}
		for _, s := range n.saved {
			if s.released {
				return &Error{Op: "backward", Tensor: t.id, Msg: MsgSecondBackward}
			}
			_, redo, ok := e.source(s, held)
			if !ok {
				return modified(n, s, held(s.t))
			}
			if redo {
				recomputed[s.t.st] = s.version
			}
		}
	}
	return nil
}

// run runs nodes, root's graph in schedule's order, sending each node's
// gradient on. A refusal at a node stops it there (see Backward); the
// gradients in flight are released, and the leaves whose every node has
// run keep what they accumulated.
func (e *Engine) run(root *node, nodes []*node, retainGraph bool) error {
	var errs []error
	grads := map[*node]*gradBuf{}
	leafGrads := map[*Tensor][]float64{}
	// pending counts, for each leaf, the edges into it of nodes not yet
	// run: at 0 its AccumulateGrad is ready, and runs first.
	pending := map[*Tensor]int{}
	for _, n := range nodes {
		for _, ed := range n.next {
			if ed.leaf != nil {
				pending[ed.leaf]++
			}
		}
	}
	g0, err := e.gradBuf(1)
	if err != nil {
		return err
	}
	g0.data[0] = 1
	grads[root] = g0
	for _, n := range nodes {
		g := grads[n]
		delete(grads, n)
		// A node reached only through inputs that sent no gradient
		// runs all the same in PyTorch, unpacking what it saved;
		// TensorLogic's lifetime skips it.
		skip := g == nil && !e.life.runsGradless()
		if g != nil {
			// retain_grad's hook runs before the node, as PyTorch's:
			// a node refused at its unpack has set it.
			errs = append(errs, e.retained(n, g.data)...)
		}
		if g != nil && n.oneShot && n.spent {
			return e.abandon(n.secondBackward(), g, nodes, grads, errs)
		}
		sv := make([][]float64, len(n.saved))
		for i, s := range n.saved {
			if skip {
				break
			}
			v, err := e.unpack(n, s)
			if err != nil {
				return e.abandon(err, g, nodes, grads, errs)
			}
			sv[i] = v
		}
		if g != nil {
			errs = append(errs, e.apply(n, g, sv, grads, leafGrads)...)
		}
		if !skip && !retainGraph && !e.has(FaultAutogradSavedNeverReleased) {
			errs = append(errs, e.releaseSaved(n))
		}
		for _, ed := range n.next {
			if l := ed.leaf; l != nil {
				if pending[l]--; pending[l] == 0 && leafGrads[l] != nil {
					errs = append(errs, e.accumulate(l, leafGrads[l]))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// secondBackward is the refusal of a oneShot node run again.
func (n *node) secondBackward() error {
	id := 0
	if n.owner != nil {
		id = n.owner.id
	}
	return &Error{Op: "backward", Tensor: id, Msg: MsgSecondBackward}
}

// abandon ends a backward refused at a node, under PyTorch's lifetime
// (under TensorLogic's, precheck found every refusal first): the
// gradients in flight, g the refused node's and those of nodes, are
// released, and the refusal is returned as it is, unless releasing (or
// errs, what went wrong before) adds to it.
func (e *Engine) abandon(refusal error, g *gradBuf, nodes []*node, grads map[*node]*gradBuf, errs []error) error {
	if g != nil {
		errs = append(errs, e.rt.Release(g.addr))
	}
	for _, m := range nodes { // in order, not the map's: the trace is reproducible
		if b := grads[m]; b != nil {
			errs = append(errs, e.rt.Release(b.addr))
		}
	}
	if more := errors.Join(errs...); more != nil {
		return errors.Join(refusal, more)
	}
	return refusal
}

// retained adds g, the gradient node n received, to the grads of the
// tensors that asked for it (RetainGrad) and whose grad_fn n is now: the
// op's output, a view n was made anew for, a tensor an in-place op
// rebased onto n.
func (e *Engine) retained(n *node, g []float64) []error {
	var errs []error
	for _, h := range n.handles {
		if h.retain && h.gradFn == n {
			errs = append(errs, e.accumulate(h, g))
		}
	}
	for _, h := range []*Tensor{n.view, n.owner} {
		if h != nil && h.retain && h.gradFn == n {
			errs = append(errs, e.accumulate(h, g))
		}
	}
	return errs
}

// apply runs node n on its gradient g and saved values sv, releasing g:
// the gradients it sends to nodes are added into grads (a new buffer for
// a node's first), those it sends to leaves summed into leafGrads, in
// PyTorch's order, for AccumulateGrad to add to the grad once.
func (e *Engine) apply(n *node, g *gradBuf, sv [][]float64, grads map[*node]*gradBuf, leafGrads map[*Tensor][]float64) []error {
	var errs []error
	_ = e.rt.Read(g.addr, uint64(8*len(g.data)), "")
	ins := n.apply(g.data, sv)
	errs = append(errs, e.rt.Release(g.addr))
	for i, ed := range n.next {
		gi := ins[i]
		switch {
		case gi == nil:
		case ed.leaf != nil:
			if acc, ok := leafGrads[ed.leaf]; ok {
				for k := range gi {
					acc[k] += gi[k]
				}
				continue
			}
			leafGrads[ed.leaf] = append([]float64(nil), gi...)
		case ed.fn != nil:
			if acc := grads[ed.fn]; acc != nil {
				for k := range gi {
					acc.data[k] += gi[k]
				}
				_ = e.rt.Write(acc.addr, uint64(8*len(acc.data)), "")
				continue
			}
			b, err := e.gradBuf(len(gi))
			if err != nil {
				return append(errs, err)
			}
			copy(b.data, gi)
			grads[ed.fn] = b
		}
	}
	return errs
}

// schedule returns the nodes reachable from root in the order PyTorch's
// engine runs them: a node is ready once every node of the graph that
// sends it gradient has run, and of the ready nodes the one made last
// (the highest sequence number) runs first.
func schedule(root *node) []*node {
	deps := map[*node]int{}
	seen := map[*node]bool{root: true}
	for stack := []*node{root}; len(stack) > 0; {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, ed := range n.next {
			if ed.fn == nil {
				continue
			}
			deps[ed.fn]++
			if !seen[ed.fn] {
				seen[ed.fn] = true
				stack = append(stack, ed.fn)
			}
		}
	}
	var out []*node
	ready := &readyQueue{root}
	for ready.Len() > 0 {
		n := heap.Pop(ready).(*node)
		out = append(out, n)
		for _, ed := range n.next {
			if ed.fn == nil {
				continue
			}
			if deps[ed.fn]--; deps[ed.fn] == 0 {
				heap.Push(ready, ed.fn)
			}
		}
	}
	return out
}

// readyQueue is a heap of nodes, the highest sequence number first.
type readyQueue []*node

func (q readyQueue) Len() int           { return len(q) }
func (q readyQueue) Less(i, j int) bool { return q[i].seq > q[j].seq }
func (q readyQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *readyQueue) Push(x any)        { *q = append(*q, x.(*node)) }
func (q *readyQueue) Pop() any {
	old := *q
	n := old[len(old)-1]
	*q = old[:len(old)-1]
	return n
}

// freeIntermediates frees the graph tensors upstream of root after a
// backward without retain_graph, except root, which moves to the top
// scope.
func (e *Engine) freeIntermediates(root *Tensor) error {
	var errs []error
	if root.graph {
		root.graph = false
		errs = append(errs, e.rt.Register(root.st.addr))
		e.register(root)
	}
	if e.has(FaultAutogradBackwardKeepsIntermediates) {
		return errors.Join(errs...)
	}
	for _, n := range upstream(root.fn()) {
		for _, h := range n.handles {
			errs = append(errs, e.kill(h))
		}
	}
	return errors.Join(errs...)
}

// gradBuf is a gradient in flight: a runtime buffer owned by backward,
// released once the node it is for has run.
type gradBuf struct {
	addr traces.Addr
	data []float64
}

func (e *Engine) gradBuf(n int) (*gradBuf, error) {
	st, err := e.newStorage("backward", n)
	if err != nil {
		return nil, err
	}
	if err := e.rt.Unregister(st.addr); err != nil {
		return nil, &Error{Op: "backward", Msg: err.Error()}
	}
	return &gradBuf{addr: st.addr, data: st.data}, nil
}

// accumulate adds g into t's grad, making the grad buffer on first use;
// the grad is owned by t (no scope record) and dies with it or at
// ZeroGrad.
func (e *Engine) accumulate(t *Tensor, g []float64) error {
	if t.dead && t.grad == nil {
		// A leaf its scope freed while a graph still led to it: no one
		// can read its grad, and a buffer made for it would have no
		// owner left to free it (a leak the model reports at end). A
		// non-leaf the graph freed keeps a retained grad (see kill),
		// which a later backward adds to, as PyTorch's does.
		return nil
	}
	if len(g) != t.Numel() {
		return &Error{Op: "backward", Tensor: t.id, Msg: fmt.Sprintf("gradient of %d elements for a tensor of %d", len(g), t.Numel())}
	}
	if t.grad == nil {
		st, err := e.newStorage("backward", len(g))
		if err != nil {
			return err
		}
		if err := e.rt.Unregister(st.addr); err != nil {
			return &Error{Op: "backward", Tensor: t.id, Msg: err.Error()}
		}
		e.nextID++
		t.grad = &Tensor{e: e, id: e.nextID, st: st, shape: append([]int(nil), t.shape...), vc: &counter{}, isGrad: true}
		e.leaves = append(e.leaves, t)
		t.grad.write(g)
		return nil
	}
	cur := t.grad.read()
	for i := range cur {
		cur[i] += g[i]
	}
	t.grad.write(cur)
	return nil
}

// dropGrad sets t's grad to none, releasing its buffer.
func (e *Engine) dropGrad(t *Tensor) error {
	g := t.grad
	t.grad = nil
	g.dead = true
	return e.rt.Release(g.st.addr)
}

// ZeroGrad sets each tensor's grad to none (PyTorch's default,
// set_to_none=True), releasing the buffers.
func (e *Engine) ZeroGrad(ts ...*Tensor) error {
	var errs []error
	for _, t := range ts {
		if t != nil && t.grad != nil {
			errs = append(errs, e.dropGrad(t))
		}
	}
	return errors.Join(errs...)
}

// ClearGrads sets every grad to none: what a training loop does at the
// end of each iteration (TensorLogic V3.3's clear_grads).
func (e *Engine) ClearGrads() error {
	if e.has(FaultAutogradNoGradClearing) {
		return nil
	}
	err := e.ZeroGrad(e.leaves...)
	e.leaves = e.leaves[:0]
	return err
}
