package flat_test

import (
	"fmt"

	"github.com/tlcheck/tlcheck/properties/flat"
)

// A program read from its listing, and the calls a correct runtime is
// asked to make for it: refs become addresses, never reused, and the
// teardown and end follow the steps. The release of dead[0] names the
// object the first release let die.
func ExampleResolve() {
	p, err := flat.ParseProgram(`
		scope_enter
		alloc 16
		release live[0]
		alloc 32
		release dead[0]
	`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range flat.Resolve(p) {
		fmt.Printf("%-16v %s\n", m.Step, m.Event.String())
	}
	// Output:
	// scope_enter      scope_enter
	// alloc 16         alloc addr 0x1000 size 16
	// release live[0]  release addr 0x1000
	// alloc 32         alloc addr 0x1020 size 32
	// release dead[0]  release addr 0x1000
	// scope_exit       scope_exit
	// end              end
}
