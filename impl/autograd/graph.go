package autograd

import (
	"errors"
	"strconv"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// node is a backward function: one per differentiable op (PyTorch's
// Node). It keeps the tensors its formula needs (saved), where each
// input's gradient goes (next), and the graph tensors its op made, which
// the graph engine frees.
type node struct {
	name    string
	next    []edge
	saved   []*saved
	apply   func(g []float64, sv [][]float64) [][]float64
	handles []*Tensor // graph tensors this node made; freed with the graph
	freed   bool      // the graph around this node was freed
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
}

// newNode makes a node whose inputs are ins, in order.
func (e *Engine) newNode(name string, ins []*Tensor, apply func([]float64, [][]float64) [][]float64) *node {
	e.nodes++
	n := &node{name: name, apply: apply, next: make([]edge, len(ins))}
	for i, t := range ins {
		switch {
		case !t.reqGrad:
		case t.gradFn != nil:
			n.next[i] = edge{fn: t.gradFn}
		default:
			n.next[i] = edge{leaf: t}
		}
	}
	return n
}

// save makes n keep t, at t's current version; it returns the index of
// the saved values in apply's sv.
func (e *Engine) save(n *node, t *Tensor, output bool) (int, error) {
	if err := e.rt.Acquire(t.st.addr); err != nil {
		return 0, &Error{Op: n.name, Tensor: t.id, Msg: err.Error()}
	}
	e.saves++
	s := &saved{name: "s" + strconv.Itoa(e.saves), t: t, version: t.vc.v, output: output}
	ev := traces.Event{Op: traces.OpSave, Name: s.name, Addr: t.st.addr}
	if t.vc.data {
		ev.Kind = "data" // .data's counter is its own: the model does not check it
	}
	e.emit(ev)
	n.saved = append(n.saved, s)
	return len(n.saved) - 1, nil
}

// attach makes out the graph tensor n produced: it takes out's buffer
// from the scope (unregister: the scope's exit will not release it) and
// gives it to the graph.
func (e *Engine) attach(op string, out *Tensor, n *node) error {
	out.gradFn, out.outputNr, out.reqGrad, out.graph = n, 0, true, true
	n.handles = append(n.handles, out)
	var err error
	if !e.has(impl.FaultAutogradScopeFreesGraph) {
		err = e.rt.Unregister(out.st.addr)
	}
	if e.has(impl.FaultAutogradStructRetain) {
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
// one whose references were released or whose version moved on.
func (e *Engine) unpack(n *node, s *saved) ([]float64, error) {
	if s.released {
		return nil, &Error{Op: "backward", Tensor: s.t.id, Msg: MsgSecondBackward}
	}
	if s.t.vc.v != s.version {
		fn, nr := "", 0
		switch {
		case s.output:
			fn = n.name
		case s.t.gradFn != nil:
			fn, nr = s.t.gradFn.name, s.t.outputNr
		}
		return nil, &Error{Op: "backward", Tensor: s.t.id, Msg: modifiedMsg(s.t.shape, fn, nr, s.t.vc.v, s.version)}
	}
	e.emit(traces.Event{Op: traces.OpUnpack, Name: s.name})
	return s.t.read(), nil
}

// releaseSaved drops n's references to its saved tensors.
func (e *Engine) releaseSaved(n *node) error {
	var errs []error
	for _, s := range n.saved {
		if !s.released {
			s.released = true
			e.emit(traces.Event{Op: traces.OpUnsave, Name: s.name})
			errs = append(errs, e.rt.Release(s.t.st.addr))
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
	var errs []error
	if t.grad != nil {
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

// FreeGraph frees the graph upstream of t, t included (dropping the last
// handle on a loss that will not be backpropagated): every node's saved
// tensors and every graph tensor its op made. A leaf frees nothing.
func (e *Engine) FreeGraph(t *Tensor) error {
	if t.gradFn == nil {
		return nil
	}
	var errs []error
	for _, n := range order(t.gradFn) {
		if n.freed {
			continue
		}
		n.freed = true
		errs = append(errs, e.releaseSaved(n))
		for _, h := range n.handles {
			errs = append(errs, e.kill(h))
		}
	}
	return errors.Join(errs...)
}
