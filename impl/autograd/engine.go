package autograd

import (
	"errors"
	"fmt"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// Config configures an Engine. The zero Config is a correct engine: its
// faults are those of the runtime it is built on (see New).
type Config struct {
	// Record, if set, receives the engine's layer-5 events (save,
	// unpack, unsave, bump, leaf_grad, snapshot, restore, recompute).
	// Give it the runtime's Config.Record, so the two streams
	// interleave in the order things happened.
	Record func(traces.Event)

	// Checkpoint saves every tensor checkpointed, as Engine.Checkpoint
	// does for the ops it runs: an in-place op on its storage first
	// takes a snapshot, and backward restores or recomputes the value
	// instead of refusing it. Off, the engine refuses as PyTorch does.
	Checkpoint bool

	// Lifetime says when tensors, nodes and saved tensors die: by
	// TensorLogic's hybrid cleanup (the zero value) or, as in PyTorch,
	// when nothing refers to them any more (see Lifetime).
	Lifetime Lifetime
}

// Engine is the autograd runtime: it makes tensors whose buffers come
// from an impl.Runtime, records the graph of differentiable ops and runs
// it backwards. It is not safe for concurrent use.
type Engine struct {
	rt     *impl.Runtime
	scopes [][]*Tensor // the tensors each open scope made, oldest first
	nextID int
	noGrad int       // depth of NoGrad calls: ops record no graph
	leaves []*Tensor // leaves holding a grad, for ClearGrads
	nodes  int       // nodes made
	saves  int       // saved tensors made: their names are "s1", "s2", ...
	record func(traces.Event)
	ckpt   int     // depth of Checkpoint calls, 1 more with Config.Checkpoint
	table  []*snap // autograd-snapshot-table-never-cleared: every snapshot ever taken

	life    lifetime // Config.Lifetime's policy (see lifetime.go)
	pending error    // a node's allocation error, for the op that made it (see nodeObject)
}

// New returns an Engine whose buffers come from rt. The engine has the
// autograd faults that rt has on: those of impl.Catalog whose Engine is
// impl.EngineAutograd, switched on in rt's impl.Config like any other. It
// fails if rt is nil.
func New(rt *impl.Runtime, cfg Config) (*Engine, error) {
	if rt == nil {
		return nil, errors.New("autograd: New needs a runtime")
	}
	e := &Engine{rt: rt, record: cfg.Record}
	life, err := newLifetime(e, cfg.Lifetime)
	if err != nil {
		return nil, err
	}
	e.life = life
	if cfg.Checkpoint {
		e.ckpt = 1
	}
	return e, nil
}

// has reports whether the autograd fault f is on: the runtime's Config
// says (impl.Runtime.HasFault), so a fault has one catalog and one switch.
func (e *Engine) has(f impl.Fault) bool { return e.rt.HasFault(f) }

// Runtime returns the memory manager the engine allocates from.
func (e *Engine) Runtime() *impl.Runtime { return e.rt }

// ScopeEnter opens a scope: the tensors made until its ScopeExit that
// are outside any graph die at that exit.
func (e *Engine) ScopeEnter() error {
	e.scopes = append(e.scopes, nil)
	return e.rt.ScopeEnter()
}

// ScopeExit closes the top scope. Under PyTorch's lifetime it drops the
// program's references to the tensors made in the scope (a Python
// function's locals at its return): they die unless a view or a node
// still refers to them. Hybrid cleanup (TensorLogic V5.0): a
// tensor outside any graph dies here, with its grad; a graph tensor's
// scope release is a no-op, since the graph engine frees it (backward,
// Detach, FreeGraph). The buffers of the dying tensors are released by
// the runtime's own scope exit, through the records they were made with.
func (e *Engine) ScopeExit() error {
	if len(e.scopes) == 0 {
		return &Error{Op: "scope_exit", Msg: "no scope is open"}
	}
	top := e.scopes[len(e.scopes)-1]
	e.scopes = e.scopes[:len(e.scopes)-1]
	return e.life.scopeExit(top)
}

// End records the end of the run. Under PyTorch's lifetime it first
// drops every reference the program still holds, which frees every
// tensor, node and saved tensor (the program is over, as a Python
// process exiting). Scopes still open are a misuse, as the runtime says;
// graphs still alive are the model's to report, as leaks.
func (e *Engine) End() error { return e.life.end() }

// NoGrad runs f with graph recording off, as torch.no_grad does: ops
// make tensors outside any graph, and an in-place op on a leaf that
// requires grad is allowed (an optimizer's update).
func (e *Engine) NoGrad(f func() error) error {
	e.noGrad++
	defer func() { e.noGrad-- }()
	return f()
}

// Checkpoint runs f with checkpointing on (cgadimpl's checkpoints): the
// tensors the ops of f save are checkpointed. Before an in-place op, with
// grad mode on, writes the storage of a checkpointed saved tensor still at
// its saved version, the engine copies the storage into a snapshot, a
// buffer of the runtime owned by the saving node and released with its
// saved tensors (after backward, unless retain_graph, or when the graph
// is freed). At backward, a checkpointed saved tensor whose storage moved
// on is restored from its snapshot; one without a snapshot of its
// version (the storage was written under NoGrad, which takes none) is
// recomputed from the inputs of the node that made it, and the values
// are written back into its storage, where every alias (views, Detach)
// sees them; one that can be neither (a leaf's, or one whose inputs
// moved on too) is refused in PyTorch's words, as without checkpointing.
func (e *Engine) Checkpoint(f func() error) error {
	e.ckpt++
	defer func() { e.ckpt-- }()
	return f()
}

// newStorage allocates a buffer of n float64s through the runtime: one
// object, count 1, with a record in the top scope.
func (e *Engine) newStorage(op string, n int) (*storage, error) {
	size := uint64(8 * max(n, 1))
	a, err := e.rt.Alloc(size)
	if err != nil {
		return nil, &Error{Op: op, Msg: fmt.Sprintf("allocating %d bytes: %v", size, err)}
	}
	return &storage{addr: a, data: make([]float64, n)}, nil
}

// emit hands a layer-5 event to the recorder, if there is one.
func (e *Engine) emit(ev traces.Event) {
	if e.record != nil {
		e.record(ev)
	}
}

// register puts a new tensor in the engine's top scope.
func (e *Engine) register(t *Tensor) {
	if len(e.scopes) > 0 {
		e.scopes[len(e.scopes)-1] = append(e.scopes[len(e.scopes)-1], t)
	}
}

// first returns the first non-nil error.
func first(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
