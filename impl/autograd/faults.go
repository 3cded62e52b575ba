package autograd

import (
	"fmt"
	"strings"
)

// Fault names a documented autograd memory bug that can be switched on.
type Fault string

// The autograd faults. Each reproduces a bug of TensorLogic's autograd
// history or of cgadimpl's version counters; FaultInfo.Caught says which
// check finds it.
const (
	FaultStructRetain               Fault = "autograd-struct-retain"
	FaultNoGradClearing             Fault = "autograd-no-grad-clearing"
	FaultScopeFreesGraph            Fault = "autograd-scope-frees-graph"
	FaultBackwardKeepsIntermediates Fault = "autograd-backward-keeps-intermediates"
	FaultDetachKeepsGraph           Fault = "autograd-detach-keeps-graph"
	FaultSavedNeverReleased         Fault = "autograd-saved-never-released"
	FaultViewOwnVersion             Fault = "autograd-view-own-version"
	FaultDoubleBump                 Fault = "autograd-double-bump"
	FaultSnapshotTableNeverCleared  Fault = "autograd-snapshot-table-never-cleared"
	FaultRestoreWrongVersion        Fault = "autograd-restore-wrong-version"
)

// FaultInfo documents one fault.
type FaultInfo struct {
	Name    Fault
	Summary string // what goes wrong
	Bug     string // the historic bug
	Trigger string // the shortest program that shows it
	Caught  string // the check that finds it
}

var catalog = [...]FaultInfo{
	{FaultStructRetain,
		"every graph tensor is retained struct-style, a reference that no one releases, so each iteration keeps its whole graph",
		"TensorLogic 4419a90: tensors stored in the autograd graph were acquired with the struct-field retain, whose matching release never ran; memory grew from 1237 MB to 2168 MB over one training run.",
		"x=Leaf(req); y=x.Mul(x); y.Sum().Backward(false); ScopeExit; End [y's buffer leaks]",
		"the model: leak at end; the epoch benchmark: linear growth"},
	{FaultNoGradClearing,
		"ClearGrads does nothing, so gradients accumulate across loop iterations",
		"TensorLogic before V3.3 had no clear_grads at the end of a loop iteration: each step's gradient was added to the last, and training diverged.",
		"loop 2x { loss=f(w); loss.Backward(false); ClearGrads } [w.grad is twice the gradient]",
		"the gradient property: after ClearGrads every grad is none, and a step's grad equals finite differences"},
	{FaultScopeFreesGraph,
		"a graph tensor keeps its scope record, so scope exit frees a tensor the graph still needs",
		"TensorLogic V5.0's hybrid cleanup fixed the use-after-free of scope exit freeing intermediates the autograd graph held: a graph tensor's scope release became a no-op.",
		"ScopeEnter; x=Leaf(req); ScopeEnter; y=x.Add(x); ScopeExit [y freed]; y.Sum() [reads freed bytes]",
		"the model: use-after-free (or double-free when the graph releases it)"},
	{FaultBackwardKeepsIntermediates,
		"backward does not free the graph's non-leaf intermediates",
		"TensorLogic V5.0: backward is where the graph engine frees the intermediates it owns; without it they outlive the step.",
		"x=Leaf(req); y=x.Exp(); y.Sum().Backward(false); End [y leaks]",
		"the model: leak at end"},
	{FaultDetachKeepsGraph,
		"detach leaves the upstream graph alive",
		"TensorLogic V5.0: detach frees the graph upstream of the detached tensor; a detach that does not leaves it owned by no one.",
		"x=Leaf(req); y=x.Exp(); y.Detach(); End [y and its saved output leak]",
		"the model: leak at end"},
	{FaultSavedNeverReleased,
		"a node's saved tensors are not released after it runs",
		"PyTorch releases saved variables after a node runs unless retain_graph; a runtime that keeps them holds every activation of every step.",
		"x=Leaf(req); y=x.Exp(); y.Sum().Backward(false); End [the saved output's reference leaks]",
		"the model: leak at end"},
	{FaultViewOwnVersion,
		"a view gets a version counter of its own instead of sharing its base's",
		"cgadimpl kept a version per tensor object, not per storage: an in-place op through a view did not bump the base's version, so backward used a modified saved tensor and returned a wrong gradient.",
		"x=Leaf([2]); v=x.Slice(0,1); v.MulInPlace(c) [x's version stays 0]; with y=w.Mul(x) before it, y.Sum().Backward runs",
		"the version property: an in-place op bumps every alias sharing the storage's counter by one; the model: saved-modified at the unpack"},
	{FaultDoubleBump,
		"one in-place op bumps the version counter twice",
		"cgadimpl bumped the version both in the in-place kernel and in its autograd wrapper; versions drifted from PyTorch's, and checkpoints keyed by version restored the wrong snapshot.",
		"x=Leaf([1]); x.AddInPlace(x,1) [version 2, want 1]",
		"the version property: an in-place op bumps by exactly one"},
	{FaultSnapshotTableNeverCleared,
		"checkpoint snapshots are kept in a global table that releasing the graph never clears",
		"cgadimpl kept its checkpoint snapshots in global tables keyed by tensor that grew from one training run to the next: the snapshot bytes of every step stayed alive after its graph was gone.",
		"Checkpoint(y=w.Mul(x)); x.AddInPlace(c,1) [snapshot of x]; y.Sum().Backward(false); End [the snapshot leaks]",
		"the model: leak at end, a snapshot never released with its graph; the epoch benchmark: snapshot bytes grow every epoch"},
	{FaultRestoreWrongVersion,
		"backward restores the newest snapshot of the storage, whatever its version",
		"cgadimpl looked snapshots up by tensor, not by (tensor, version): after two checkpoints of one storage, or with only a stale one, backward restored values of another version than the one saved, and returned a wrong gradient.",
		"h=a.Exp() [saves h@0]; NoGrad(h.MulInPlace(2)); y=h.Mul(c) [saves h@1]; h.AddInPlace(k,1) [snapshot of h@1]; backward [h@0 restored from the snapshot of h@1]",
		"the model: saved-modified at the restore"},
}

// Catalog lists every autograd fault, in a stable order.
func Catalog() []FaultInfo { return append([]FaultInfo(nil), catalog[:]...) }

type faultSet uint32

const (
	fStructRetain faultSet = 1 << iota
	fNoGradClearing
	fScopeFreesGraph
	fBackwardKeepsIntermediates
	fDetachKeepsGraph
	fSavedNeverReleased
	fViewOwnVersion
	fDoubleBump
	fSnapshotTableNeverCleared
	fRestoreWrongVersion
)

func (s faultSet) has(b faultSet) bool { return s&b != 0 }

func parseFaults(fs []Fault) (faultSet, error) {
	var s faultSet
next:
	for _, f := range fs {
		for i, c := range catalog {
			if c.Name == f {
				s |= 1 << i
				continue next
			}
		}
		names := make([]string, len(catalog))
		for i, c := range catalog {
			names[i] = string(c.Name)
		}
		return 0, fmt.Errorf("autograd: unknown fault %q (the catalog has %s)", f, strings.Join(names, ", "))
	}
	return s, nil
}
