package suspect_test

import (
	"bytes"
	"fmt"

	"github.com/tlcheck/tlcheck/check/suspect"
	"github.com/tlcheck/tlcheck/internal/snapgen"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// A training loop that keeps each step's loss in a list: the search
// finds the loop's period from its allocation sites and names
// cross_entropy's site, one block an iteration.
func ExampleFind() {
	s, _ := snapgen.Generate(snapgen.Config{Loop: snapgen.KeepLoss, Steps: 12})
	var pickle bytes.Buffer
	s.WritePickle(&pickle)
	r, _ := torchsnap.NewReader(&pickle)

	res, err := suspect.Find(r, suspect.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("iterations begin at %s: %d seen\n", res.Iteration.Site, res.Iteration.Count)
	for _, x := range res.Suspects {
		fmt.Printf("suspect %s: %d block (%d bytes) an iteration over %d of %d iterations, %s confidence\n",
			x.Site[len(x.Site)-len("functional.py:3494"):], x.BlocksPerIteration, x.BytesPerIteration,
			x.IterationsSeen, x.Complete, x.Confidence)
	}
	// Output:
	// iterations begin at train.py:31: 12 seen
	// suspect functional.py:3494: 1 block (4 bytes) an iteration over 11 of 11 iterations, high confidence
}
