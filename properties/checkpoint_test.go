package properties

import (
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
)

// checkpointProperty: with checkpoints on, in-place writes to a graph's
// intermediates after its loss is built leave backward's gradients as if
// the writes had not happened. A write in grad mode takes a snapshot of
// every saved tensor it overwrites, and backward restores it: backward
// must succeed. A write under NoGrad takes none, and backward recomputes
// what it can, or refuses in PyTorch's words when an input it needs has
// moved on too; refused or not, no gradient may differ from the
// unwritten run's. The gradients of restores and recomputes are checked
// here, and only their memory by the model-judged programs.
func checkpointProperty(faults []impl.Fault) func(*rapid.T) {
	return func(t *rapid.T) {
		x0 := make([]float64, 3)
		for i := range x0 {
			x0[i] = rapid.Float64Range(0.5, 2).Draw(t, "x")
		}
		ops := rapid.SliceOfN(rapid.IntRange(0, expressionOps-1), 1, 6).Draw(t, "ops")
		args := rapid.SliceOfN(rapid.IntRange(0, 63), len(ops), len(ops)).Draw(t, "args")
		writes := rapid.SliceOfN(rapid.IntRange(0, 63), 1, 3).Draw(t, "writes")
		noGrad := rapid.SliceOfN(rapid.Bool(), len(writes), len(writes)).Draw(t, "noGrad")
		want, err := checkpointGrads(t, nil, x0, ops, args, nil, nil)
		if err != nil {
			t.Fatalf("without writes: %v", err)
		}
		got, err := checkpointGrads(t, faults, x0, ops, args, writes, noGrad)
		if err != nil {
			if !strings.Contains(err.Error(), "has been modified by an inplace operation") || !anyTrue(noGrad) {
				t.Fatalf("backward refused: %v (writes under NoGrad: %v)", err, noGrad)
			}
			return
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-12*max(1, math.Abs(want[i])) {
				t.Fatalf("d/dx%d: %g after the writes, %g without them", i, got[i], want[i])
			}
		}
	}
}

func anyTrue(bs []bool) bool {
	for _, b := range bs {
		if b {
			return true
		}
	}
	return false
}

// checkpointGrads builds an expression of three one-element leaves in
// checkpoint mode, writes in place to the intermediates writes names
// (under NoGrad where noGrad says), and returns the leaves' gradients,
// or backward's refusal.
func checkpointGrads(t *rapid.T, faults []impl.Fault, x0 []float64, ops, args, writes []int, noGrad []bool) ([]float64, error) {
	e, leaves, vals, y := lossOf(t, faults, autograd.Config{Checkpoint: true}, x0, ops, args)
	inner := vals[len(leaves):] // intermediates only: an in-place write to a leaf that requires grad is refused
	for i, w := range writes {
		v := inner[w%len(inner)]
		write := func() error { return v.MulInPlace(0.5) }
		var err error
		if noGrad[i] {
			err = e.NoGrad(write)
		} else {
			err = write()
		}
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if err := y.Backward(false); err != nil {
		return nil, err
	}
	return leafGrads(leaves), nil
}

// TestCheckpointGradients: the correct engine keeps the gradients, and
// the faults that restore other values than the saved ones do not.
func TestCheckpointGradients(t *testing.T) {
	rapid.Check(t, checkpointProperty(nil))
	for _, f := range []impl.Fault{autograd.FaultAutogradRestoreWrongVersion, autograd.FaultAutogradSnapshotShallow} {
		t.Run(string(f), func(t *testing.T) {
			setFlag(t, "rapid.nofailfile", "true")
			setFlag(t, "rapid.seed", rapidSeed)
			setFlag(t, "rapid.checks", rapidChecks)
			setFlag(t, "rapid.shrinktime", "100ms")
			tb := &silentTB{name: t.Name()}
			rapid.Check(tb, checkpointProperty([]impl.Fault{f}))
			if !tb.Failed() {
				t.Errorf("the gradient property missed %s", f)
			}
		})
	}
}
