package fuzz

import (
	"testing"

	"github.com/tlcheck/tlcheck/properties"
)

// FuzzAutogradProgram: bytes as an autograd program (four a step: the
// op, two operands, a constant; a kind byte from 240 up an episode of a
// few steps over the newest tensors; a partial step left at the end
// makes it checkpointed; see properties.RunAutogradBytes) run on
// impl/autograd over a recording runtime, under TensorLogic's lifetime and
// then PyTorch's. The property: no misuse of the runtime, versions that
// move as the storage groups say, no grad after ClearGrads, a tensor the
// program holds alive (PyTorch's lifetime), and a trace the model replays
// clean.
func FuzzAutogradProgram(f *testing.F) {
	f.Add([]byte{0, 0, 0, 4, 5, 0, 0, 0, 11, 1, 0, 0, 19, 2, 0, 0})              // leaf; exp; sum; backward
	f.Add([]byte{0, 0, 0, 4, 12, 0, 0, 0, 2, 0, 1, 0, 16, 1, 0, 5, 19, 2, 0, 0}) // leaf; reshape; mul; add_; backward
	f.Add([]byte{0, 0, 0, 4, 23, 0, 0, 0, 6, 0, 0, 0, 24, 0, 0, 0, 25, 1, 0, 0}) // leaf; scope; tanh; exit; free_graph
	f.Add([]byte{17, 1, 0, 6, 20, 2, 0, 0, 0})                                   // checkpointed (the trailing byte): mul_ c; backward-retain y (restores c)
	f.Add([]byte{27, 0, 0, 0, 29, 3, 0, 6, 19, 3, 0, 0, 0})                      // checkpointed: ckpt-exp x (h); mul_-nograd h; backward (recomputes h)
	f.Add([]byte{240, 0, 0, 0})                                                  // an episode (a kind byte from 240): issue 17's leaf; exp; mul_ under NoGrad; mul by a leaf; sum; backward twice, retaining
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := properties.RunAutogradBytes(data); err != nil {
			t.Fatal(err)
		}
	})
}
