// Package autograd is a reverse-mode autograd runtime with PyTorch's
// memory semantics, built on the impl memory manager so that every
// buffer it makes and frees is a call of impl.Runtime and appears in the
// runtime's trace, where the model (package model) checks it.
//
// # The contract
//
// Tensors hold float64 values in buffers (storages) allocated through
// the runtime. A leaf is made by Leaf (requires_grad or not), a
// zero-dimensional constant by Scalar; every op on a tensor that
// requires grad makes a node (AddBackward0, MulBackward0, ...) and a
// non-leaf output in the graph. Ops: Add, Sub, Mul, Div (broadcasting
// by PyTorch's rules), Neg, Pow (by a constant), Relu, Exp, Log, Tanh,
// Sum, Matmul; views Reshape and Slice share their base's storage;
// in-place AddInPlace (add_), SubInPlace (sub_), MulTensorInPlace and
// DivInPlace (mul_ and div_ by a tensor), AddScalarInPlace and
// MulInPlace (add_ and mul_ by a number; mul_ saves the number, as
// PyTorch saves a wrapped number), ZeroInPlace (zero_); Detach shares
// storage and version counter; Data (.data) shares storage but not the
// counter.
//
// Versions: one counter per storage group (base, views, Detach); every
// in-place op bumps it by exactly one. A node saves the tensors its
// formula needs with their version (an input only for the gradients
// wanted, an output always; an in-place op's before it writes); Backward refuses, in PyTorch's
// words, a saved tensor modified since (the message names "output N of
// X" when the saved tensor has a grad_fn) and a node whose saved tensors
// were released by an earlier backward (MsgSecondBackward); a node that
// saved nothing runs again.
//
// In-place ops follow PyTorch's rules in its order: check_inplace (a
// recorded op on a view made under NoGrad, MsgNoGradViewInPlace; on a
// view of a leaf that requires grad, MsgLeafViewInPlace; on such a leaf,
// MsgLeafInPlace), then the kernel's (an operand partly sharing the
// written elements, MsgOverlap; one that does not broadcast to the
// written shape). A recorded op rebases the tensor's history, bringing
// a tensor outside any graph into one if the operand requires grad; on
// a view, the base's grad_fn becomes CopySlices. A view whose group was
// written in place since its grad_fn was made gets a new one,
// AsStridedBackward0 of its base as it is now, so that its gradient
// flows through the in-place op. A view made under NoGrad of a tensor
// that requires grad requires grad too, a leaf that accumulates nothing;
// once its group is written in place, its use with grad mode on is
// refused (MsgNoGradViewRebased). Backward runs the nodes in PyTorch's
// order (the newest ready node first) and adds gradients in its order.
// RetainGrad keeps a non-leaf's grad past the backward that frees it,
// until ZeroGrad, ClearGrads or the top scope's exit.
//
// # Two lifetimes
//
// When a tensor, a node or a saved tensor dies is Config.Lifetime's to
// say; values, gradients, versions and refusals are the same under both,
// while the buffers they need live.
//
// LifetimeTensorLogic, the default, is TensorLogic's hybrid cleanup
// (V5.0): a tensor outside any graph has a record in the scope that made
// it and dies at ScopeExit, with its grad; a graph tensor has no record
// (the runtime's unregister), so its scope release is a no-op, and the
// graph engine frees it: Backward without retain_graph releases each
// node's saved tensors once it has run and then frees the non-leaf
// intermediates (the root moves to the top scope); Detach frees the
// graph upstream of the detached tensor; FreeGraph frees a graph that is
// never backpropagated; the in-place ops rebased onto a tensor release
// what they saved when it dies (a graph made before them does not lead
// to them). ClearGrads, at the end of each loop iteration, sets every
// grad to none (V3.3). A refused Backward changes nothing: every saved
// tensor it would unpack is checked before any node runs.
//
// LifetimePyTorch is PyTorch's, Python's reference counting: every
// tensor an op returns is a reference the program holds until it drops
// it (Tensor.Drop, Python's del) or the scope that made it exits (a
// function's locals at its return); End drops every reference still
// held. A tensor lives while the program, a view of it (its base) or a
// node (an edge into a leaf, PyTorch's AccumulateGrad) refers to it; a
// node while a tensor's grad_fn or a later node's edge does; a saved
// tensor while its node lives, or until a backward without retain_graph
// runs the node; a storage while a tensor or a saved tensor refers to
// it. No buffer has a scope record, and each node is an object of the
// runtime too, so the trace shows every life. Detach frees nothing, an
// intermediate can be read after backward, FreeGraph is refused (drop
// the tensors instead), and a refused Backward is PyTorch's: the nodes
// run one by one, newest ready first, and the refusal stops the walk at
// the node that failed, after the nodes before it have run (the leaves
// all of whose nodes ran hold their gradient, and those nodes released
// their saved tensors unless retain_graph); the failing node and those
// after it keep theirs.
//
// Of the differences issue 20 found between the runtime and PyTorch, the
// graph lifetime's are present only under LifetimeTensorLogic, by
// design, since they are what hybrid cleanup is for: `loss.detach()`
// followed by `loss.backward()` is refused there (Detach freed the
// graph), an intermediate cannot be read after backward (backward freed
// it), and a refused backward accumulates nothing (atomic, so that a
// program can fix the tensor and run it again). retain_grad keeps a
// non-leaf's grad past backward under both. Every other difference is
// fixed under both lifetimes.
//
// Checkpoints (cgadimpl's, opt-in: Config.Checkpoint, or Checkpoint for
// the ops of one function): a saved tensor saved with checkpointing on is
// copied into a snapshot, a runtime buffer owned by its node, before a
// tracked in-place op writes its storage; backward then restores it from
// the snapshot of its version, or, with only stale snapshots or none,
// recomputes it from its node's inputs and writes it back into the
// storage, where every alias sees it, instead of refusing. The snapshots
// are released with the saved tensors: their bytes do not outlive the
// graph.
//
// What is refused returns an *Error naming the op and the tensor; no
// call panics.
//
// # Checking it
//
// Record the runtime (impl.Config.Record) and the engine (Config.Record)
// into one trace and replay it with model.Replay, under either lifetime:
// a graph never freed is a leak at end, a buffer read after the engine
// freed it is a use-after-free, and layer 5 of the format (save, unpack, unsave, bump,
// leaf_grad, snapshot, restore, recompute) lets the model count versions
// by the storage's identity: a saved tensor unpacked, or restored from a
// snapshot, at another version is saved-modified, an in-place op on a
// leaf that requires grad a misuse.
//
// # Faults
//
// The engine's faults, each a historic bug, are its rows of impl's catalog
// (faultrows.go, Engine impl.EngineAutograd), switched on in the
// runtime's impl.Config like any other; the engine asks its runtime
// (impl.Runtime.HasFault) and has no switch of its own. A fault of one
// lifetime's machinery does nothing under the other (its row says so).
// The check that catches each:
//
//	autograd-struct-retain                the model: leak at end; the epoch benchmark: linear growth
//	autograd-no-grad-clearing             after ClearGrads every grad is none; a step's grad equals finite differences
//	autograd-scope-frees-graph            the model: use-after-free (or double-free when the graph, or under PyTorch's lifetime the tensor's death, releases it)
//	autograd-backward-keeps-intermediates TensorLogic's lifetime: the model: leak at end
//	autograd-detach-keeps-graph           TensorLogic's lifetime: the model: leak at end
//	autograd-saved-never-released         TensorLogic's lifetime: the model: leak at end; PyTorch's: a second backward runs that PyTorch refuses
//	autograd-view-own-version             the version property (an in-place op bumps every alias sharing the storage's counter by one); the model: saved-modified at the unpack
//	autograd-double-bump                  the version property: an in-place op bumps by exactly one
//	autograd-snapshot-table-never-cleared the model: leak at end (a snapshot never released with its graph); the epoch benchmark: snapshot bytes grow
//	autograd-restore-wrong-version        the model: saved-modified at the restore
//	autograd-recompute-counter-version    the model: saved-modified at the unpack (the storage holds a recomputed older version)
//	autograd-inplace-keeps-restored       the model: saved-modified at the unpack (the storage was written after the recompute)
//	autograd-drop-keeps-grad-fn           PyTorch's lifetime: the model: leak at end (the dropped tensor's node and its saved tensors)
//	autograd-saved-output-cycle           PyTorch's lifetime: the model: leak at end (a graph dropped without backward)
//
// # A training loop
//
// Every op returns (*Tensor, error), the primitive the drivers and the
// properties need. A training loop reads better on a Tape, which keeps
// the first error as bufio.Writer does (later ops do nothing and return
// nil; Err names the op and its step). Before, each op checked:
//
//	xw, err := x.Matmul(w)
//	if err != nil {
//		return err
//	}
//	pred, err := xw.Add(b) // and so on for Sub, Pow, Sum, Backward, ...
//
// After, as the PyTorch original reads (see ExampleTape):
//
//	tp := autograd.NewTape(e)
//	tp.ScopeEnter()
//	loss := tp.Sum(tp.Pow(tp.Sub(tp.Add(tp.Matmul(x, w), b), y), 2))
//	tp.Backward(loss, false)
//	tp.NoGrad(func() { tp.SubInPlace(w, tp.Grad(w), lr) })
//	tp.ClearGrads()
//	tp.ScopeExit() // runs even after an error, as Rows.Close does
//	if err := tp.Err(); err != nil {
//		return fmt.Errorf("epoch %d: %w", epoch, err)
//	}
package autograd
