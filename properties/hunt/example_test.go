package hunt_test

import (
	"fmt"
	"time"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/hunt"
)

// Hunting one fault: generated programs find it, the failing one is
// shrunk, and the counterexample is its trace.
func ExampleFault() {
	f, _ := impl.LookupFault("release-ignores-zero")
	r := hunt.Fault(f, hunt.Options{Seed: 1, Budget: 5 * time.Second})
	fmt.Println(r.Caught, r.Engine, r.Unit, r.Size > 0)
	// Output: true program events true
}
