package autograd

import (
	"fmt"
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// Lifetime is when the engine frees what it made. The two differ only in
// when buffers die, never in values, versions or what is refused while the
// buffers live (see the package comment, "Two lifetimes").
type Lifetime int

const (
	// LifetimeTensorLogic is TensorLogic's hybrid cleanup (V5.0), the
	// default: a tensor outside any graph dies at its scope's exit; the
	// graph engine frees a graph at backward (its intermediates), at
	// Detach (upstream of the detached tensor) and at FreeGraph; a
	// refused backward changes nothing.
	LifetimeTensorLogic Lifetime = iota
	// LifetimePyTorch is PyTorch's (Python's reference counting): every
	// tensor an op returns is a reference the program holds until it
	// drops it (Tensor.Drop, Python's del) or its scope exits; a tensor
	// lives while the program, a view of it or a node refers to it, a
	// node while a tensor's grad_fn or a later node's edge does, and a
	// node's saved tensors while it lives or until a backward without
	// retain_graph runs it. Detach frees nothing, intermediates can be
	// read after backward, and a refused backward leaves what the nodes
	// before the refusal did (accumulated grads, released saved tensors).
	LifetimePyTorch
)

// String names the lifetime as Config's documentation does: "tensorlogic"
// or "pytorch".
func (l Lifetime) String() string {
	switch l {
	case LifetimeTensorLogic:
		return "tensorlogic"
	case LifetimePyTorch:
		return "pytorch"
	}
	return "Lifetime(" + strconv.Itoa(int(l)) + ")"
}

// lifetime is the policy a Lifetime names: the engine calls it at every
// point where the two lifetimes differ, and nowhere else tests which one
// it runs under. hybrid (hybrid.go) is TensorLogic's, refCount
// (refcount.go) PyTorch's. Values, versions, gradients and refusals are
// the engine's, the same under both.
type lifetime interface {
	// kind is the Lifetime the policy is.
	kind() Lifetime

	// made is told of t, a new handle the program holds, right after
	// it is registered in the top scope: fresh if its storage is new
	// (the buffer has a record in the top scope), an alias otherwise.
	made(t *Tensor, fresh bool) error
	// recordAlias is told that the buffer at a, just acquired, gains an
	// alias, before the alias is made: where a scope's exit frees it,
	// the buffer gains a record in the top scope.
	recordAlias(a traces.Addr) error
	// attached is told that out became the output of a node: who now
	// owns out's buffer (the graph, or out's own references).
	attached(out *Tensor) error
	// savedCopy is told that c, a copy whose only reference is a node's
	// saved tensor, is no longer a handle: before its buffer's handle
	// reference is released.
	savedCopy(c *Tensor) error
	// nodeMade is told of a new node of the graph; its error is kept
	// for the op that made the node (see Engine.takePending).
	nodeMade(n *node) error
	// unreachable reports whether t is alive but out of the program's
	// reach (alive only for what refers to it): a use of it is refused.
	unreachable(t *Tensor) bool

	// detached is told that t, which has a grad_fn, was detached.
	detached(t *Tensor) error
	// freeGraph is Engine.FreeGraph.
	freeGraph(t *Tensor) error
	// drop is Tensor.Drop, for a non-nil t.
	drop(t *Tensor) error
	// rebased is told that an in-place op rebased a history: a node may
	// have lost what referred to it.
	rebased() error

	// beforeBackward may refuse a backward from t, over nodes in the
	// order it runs them, before any node runs.
	beforeBackward(t *Tensor, nodes []*node) error
	// afterBackward follows a backward from t that returned err, and
	// returns the backward's error.
	afterBackward(t *Tensor, retainGraph bool, err error) error
	// runsGradless reports whether a node that no gradient reached
	// still runs at backward, unpacking what it saved (PyTorch's).
	runsGradless() bool

	// scopeExit closes the scope whose tensors were top (oldest first),
	// the engine's and the runtime's.
	scopeExit(top []*Tensor) error
	// end ends the run, the engine's and the runtime's.
	end() error
}

// newLifetime returns e's policy for l; it fails on a Lifetime that is
// neither.
func newLifetime(e *Engine, l Lifetime) (lifetime, error) {
	switch l {
	case LifetimeTensorLogic:
		return &hybrid{e: e}, nil
	case LifetimePyTorch:
		return &refCount{e: e}, nil
	}
	return nil, fmt.Errorf("autograd: unknown lifetime %v", l)
}

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
	return t.e.life.drop(t)
}

// nodeObject tells the lifetime of n, a new node of the graph; an error
// is kept for the op that made the node (see takePending).
func (e *Engine) nodeObject(n *node) {
	if err := e.life.nodeMade(n); err != nil && e.pending == nil {
		e.pending = err
	}
}

// takePending returns and clears the error of a node made since the last
// call (see nodeObject).
func (e *Engine) takePending() error {
	err := e.pending
	e.pending = nil
	return err
}
