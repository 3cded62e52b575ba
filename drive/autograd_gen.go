package drive

import (
	"math/rand/v2"

	"github.com/tlcheck/tlcheck/properties/autograd"
)

// GenerateTensorProgram returns a random layer-5 program: leaves of small
// shapes, every op, views, in-place ops with and without no_grad, detach
// and .data, backward with and without retain_graph, zero_grad,
// retain_grad and drop, ending with end. It follows the shapes it makes,
// so that most calls are ones PyTorch takes; some are not (a shape that
// does not broadcast, an in-place op on a leaf, a backward twice), and
// those are the interesting ones. The same rng state gives the same
// program.
//
// It is the autograd language's generator, autograd.Generate.
func GenerateTensorProgram(rng *rand.Rand) []TensorCall { return tensorCalls(autograd.Generate(rng)) }
