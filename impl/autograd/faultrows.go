package autograd

import "github.com/tlcheck/tlcheck/impl"

// The autograd faults (EngineAutograd): bugs of the graph engine, which
// asks the Runtime it allocates from (HasFault) which are on; the
// Runtime's own calls are unchanged. A new one goes at the end.
var (
	FaultAutogradStructRetain = impl.DeclareFault(impl.FaultInfo{Name: "autograd-struct-retain", Engine: impl.EngineAutograd,
		Summary: "every graph tensor is retained struct-style, a reference that no one releases, so each iteration keeps its whole graph",
		Bug:     "TensorLogic 4419a90: tensors stored in the autograd graph were acquired with the struct-field retain, whose matching release never ran; memory grew from 1237 MB to 2168 MB over one training run.",
		Trigger: "x=Leaf(req); y=x.Mul(x); y.Sum().Backward(false); ScopeExit; End [y's buffer leaks]"})
	FaultAutogradNoGradClearing = impl.DeclareFault(impl.FaultInfo{Name: "autograd-no-grad-clearing", Engine: impl.EngineAutograd,
		Summary: "ClearGrads does nothing, so gradients accumulate across loop iterations",
		Bug:     "TensorLogic before V3.3 had no clear_grads at the end of a loop iteration: each step's gradient was added to the last, and training diverged.",
		Trigger: "loop 2x { loss=f(w); loss.Backward(false); ClearGrads } [w.grad is twice the gradient]"})
	FaultAutogradScopeFreesGraph = impl.DeclareFault(impl.FaultInfo{Name: "autograd-scope-frees-graph", Engine: impl.EngineAutograd,
		Summary: "a graph tensor keeps its scope record, so scope exit frees a tensor the graph still needs (under PyTorch's lifetime, where no buffer has a record, the tensor's death then releases it again)",
		Bug:     "TensorLogic V5.0's hybrid cleanup fixed the use-after-free of scope exit freeing intermediates the autograd graph held: a graph tensor's scope release became a no-op.",
		Trigger: "ScopeEnter; x=Leaf(req); ScopeEnter; y=x.Add(x); ScopeExit [y freed]; y.Sum() [reads freed bytes]"})
	FaultAutogradBackwardKeepsIntermediates = impl.DeclareFault(impl.FaultInfo{Name: "autograd-backward-keeps-intermediates", Engine: impl.EngineAutograd,
		Summary: "TensorLogic's lifetime only (under PyTorch's backward frees no intermediate): backward does not free the graph's non-leaf intermediates",
		Bug:     "TensorLogic V5.0: backward is where the graph engine frees the intermediates it owns; without it they outlive the step.",
		Trigger: "x=Leaf(req); y=x.Exp(); y.Sum().Backward(false); End [y leaks]"})
	FaultAutogradDetachKeepsGraph = impl.DeclareFault(impl.FaultInfo{Name: "autograd-detach-keeps-graph", Engine: impl.EngineAutograd,
		Summary: "TensorLogic's lifetime only (under PyTorch's detach frees nothing): detach leaves the upstream graph alive",
		Bug:     "TensorLogic V5.0: detach frees the graph upstream of the detached tensor; a detach that does not leaves it owned by no one.",
		Trigger: "x=Leaf(req); y=x.Exp(); y.Detach(); End [y and its saved output leak]"})
	FaultAutogradSavedNeverReleased = impl.DeclareFault(impl.FaultInfo{Name: "autograd-saved-never-released", Engine: impl.EngineAutograd,
		Summary: "a node's saved tensors are not released after it runs; under TensorLogic's lifetime a leak at end (its graph frees no node); under PyTorch's the node's death releases them, and what shows is a second backward that runs where PyTorch refuses it",
		Bug:     "PyTorch releases saved variables after a node runs unless retain_graph; a runtime that keeps them holds every activation of every step.",
		Trigger: "x=Leaf(req); y=x.Exp(); y.Sum().Backward(false); End [the saved output's reference leaks]"})
	FaultAutogradViewOwnVersion = impl.DeclareFault(impl.FaultInfo{Name: "autograd-view-own-version", Engine: impl.EngineAutograd,
		Summary: "a view gets a version counter of its own instead of sharing its base's",
		Bug:     "cgadimpl kept a version per tensor object, not per storage: an in-place op through a view did not bump the base's version, so backward used a modified saved tensor and returned a wrong gradient.",
		Trigger: "x=Leaf([2]); v=x.Slice(0,1); v.MulInPlace(c) [x's version stays 0]; with y=w.Mul(x) before it, y.Sum().Backward runs"})
	FaultAutogradDoubleBump = impl.DeclareFault(impl.FaultInfo{Name: "autograd-double-bump", Engine: impl.EngineAutograd,
		Summary: "one in-place op bumps the version counter twice",
		Bug:     "cgadimpl bumped the version both in the in-place kernel and in its autograd wrapper; versions drifted from PyTorch's, and checkpoints keyed by version restored the wrong snapshot.",
		Trigger: "x=Leaf([1]); x.AddInPlace(x,1) [version 2, want 1]"})
	FaultAutogradSnapshotTableNeverCleared = impl.DeclareFault(impl.FaultInfo{Name: "autograd-snapshot-table-never-cleared", Engine: impl.EngineAutograd,
		Summary: "checkpoint snapshots are kept in a global table that releasing the graph never clears",
		Bug:     "cgadimpl kept its checkpoint snapshots in global tables keyed by tensor that grew from one training run to the next: the snapshot bytes of every step stayed alive after its graph was gone.",
		Trigger: "Config{Checkpoint}; y=w.Mul(x); x.AddInPlace(c,1) [snapshot of x]; y.Sum().Backward(false); End [the snapshot leaks]"})
	FaultAutogradRestoreWrongVersion = impl.DeclareFault(impl.FaultInfo{Name: "autograd-restore-wrong-version", Engine: impl.EngineAutograd,
		Summary: "the snapshot filed for a saved tensor's version is taken after the in-place op wrote and bumped the storage, so backward restores a snapshot of the next version",
		Bug:     "cgadimpl's checkpoint hook ran after the in-place kernel, whose version bump had already happened: the snapshot it kept for the saved version held the next one, and backward restored values of another version than the one saved, a wrong gradient with no error.",
		Trigger: "Config{Checkpoint}; y=w.Mul(x) [saves x@0]; x.AddInPlace(c,1) [bump, then a snapshot of x@1 filed as x@0]; y.Sum().Backward(false) [restores x@1]"})
	FaultAutogradSnapshotShallow = impl.DeclareFault(impl.FaultInfo{Name: "autograd-snapshot-shallow", Engine: impl.EngineAutograd,
		Summary: "a checkpoint's snapshot is the saved tensor's storage itself, held by one more reference, not a copy: the in-place op it was taken for overwrites it, and backward restores the modified values",
		Bug:     "A bug of the shape of cgadimpl's checkpoints (seed 004), not one commit: a snapshot that aliases its storage (a shallow copy, which tensor handles sharing one buffer make easy) records the right version but holds whatever the storage holds later, so the restore gives a wrong gradient with no error.",
		Trigger: "Config{Checkpoint}; y=w.Mul(x) [saves x@0]; x.AddInPlace(c,1) [x's snapshot is x's own buffer, which the op then writes]; y.Sum().Backward(false) [restores x@1's values as x@0]"})
	FaultAutogradRecomputeCounterVersion = impl.DeclareFault(impl.FaultInfo{Name: "autograd-recompute-counter-version", Engine: impl.EngineAutograd,
		Summary: "after a checkpoint recompute writes a saved version's values back, the engine takes the storage to hold its counter's version, so a later unpack of a tensor saved at that version reads the recomputed, older values",
		Bug:     "A bug of the shape of cgadimpl's checkpoints (seed 004), not one commit, and of every engine that keys a storage's contents by its version counter alone: a recompute writes an older version's values into the storage without bumping (or rolling back) the counter, and an engine that does not record which version the storage now holds believes it is current; a tensor saved at the counter's version is then unpacked from those values, a wrong gradient with no error where PyTorch's saved-variable check would refuse.",
		Trigger: "Config{Checkpoint}; h=a.Exp() [saves h@0]; NoGrad{h.MulInPlace(3)} [h@1]; root=h.Mul(c).Sum() [saves h@1]; root.Backward(true) [recomputes h@0's values into h]; root.Backward(true) [unpacks h@1 from version 0's values, want the modified refusal]"})
	FaultAutogradInplaceKeepsRestored = impl.DeclareFault(impl.FaultInfo{Name: "autograd-inplace-keeps-restored", Engine: impl.EngineAutograd,
		Summary: "an in-place op after a checkpoint recompute leaves the storage marked as holding the recomputed version, so a tensor saved at that version is later unpacked from the overwritten values",
		Bug:     "The generic stale-cache class of bug: a mark that says which version a storage's values are (set by a recompute) must be cleared by every write; an in-place kernel that bumps the counter but forgets the mark lets backward take the new values for the old version's, a wrong gradient with no error where PyTorch would refuse the saved tensor as modified.",
		Trigger: "Config{Checkpoint}; h=a.Exp() [saves h@0]; NoGrad{h.MulInPlace(3)}; root=h.Sum(); root.Backward(true) [recomputes h@0 into h]; NoGrad{h.MulInPlace(2)} [h still marked as holding version 0]; root.Backward(true) [unpacks h@0 from the doubled values, want a second recompute]"})
	FaultAutogradDropKeepsGradFn = impl.DeclareFault(impl.FaultInfo{Name: "autograd-drop-keeps-grad-fn", Engine: impl.EngineAutograd,
		Summary: "PyTorch's lifetime only: dropping a tensor keeps a reference to its grad_fn that nothing gives back, so the node, the graph upstream of it and their saved tensors outlive every tensor that led to them",
		Bug:     "The shape of the reference leaks of PyTorch's C++ autograd (a grad_fn's shared_ptr taken, e.g. by a hook or a Python wrapper, and never reset): the graph of every step stays alive after the step's tensors are gone, and memory grows step by step. Under TensorLogic's lifetime a tensor is never dropped.",
		Trigger: "Lifetime PyTorch; x=Leaf(req); y=x.Exp() [saves y]; y.Drop(); End [ExpBackward0's object and its saved y leak]"})
	FaultAutogradSavedOutputCycle = impl.DeclareFault(impl.FaultInfo{Name: "autograd-saved-output-cycle", Engine: impl.EngineAutograd,
		Summary: "PyTorch's lifetime only: a node saves its own output with the output's grad_fn, a reference cycle (node, saved output, node) that reference counting never frees unless backward releases the saved output",
		Bug:     "PyTorch's SavedVariable saves an output without its grad_fn for this reason (saved_variable.cpp: saving it would make a reference cycle); a custom autograd Function that stores its output on ctx instead of ctx.save_for_backward makes that cycle, and a graph dropped without backward leaks (the leak PyTorch's documentation of save_for_backward warns about). PyTorch 1.13 shows it still with a saved_tensors_hooks pack hook that keeps the tensor it is given in a Python object: under it, h = w.exp(); del h frees nothing, not even at gc.collect().",
		Trigger: "Lifetime PyTorch; x=Leaf(req); y=x.Exp() [saves y]; y.Drop(); End [ExpBackward0 and y leak; after y.Sum().Backward(false) nothing does]"})
)
