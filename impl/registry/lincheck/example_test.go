package lincheck_test

import (
	"fmt"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/registry"
	"github.com/tlcheck/tlcheck/impl/registry/lincheck"
)

// A correct registry's concurrent histories are linearizable (100 of
// them); with a buffer's count updated outside the shard lock, one is not.
func Example() {
	for _, faults := range [][]impl.Fault{nil, {registry.FaultRegistryCountOutsideLock}} {
		cfg := lincheck.Config{Clients: 8, Ops: 24, Seed: 1, Faults: faults}
		r, _, err := lincheck.Hunt(cfg, func(n int) bool { return n < 100 })
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(faults, r.Verdict)
	}
	// Output:
	// [] Ok
	// [registry-count-outside-lock] Illegal
}
