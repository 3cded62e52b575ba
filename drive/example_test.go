package drive_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/properties/flat"
)

// A generated program as the protocol sends it: objects named by handle.
// The tensor (handle 1) is still alive after its release, as the struct
// holds it, so live[0] still names it.
func ExampleLower() {
	p, _ := flat.ParseProgram(`
		scope_enter
		alloc 16
		struct_init 32 [live[0] null]
		release live[0]
		param_register w live[0]`)
	_, calls := drive.Lower(p, nil)
	_ = drive.WriteCalls(os.Stdout, calls, "the program, then the teardown and end")
	// Output:
	// # the program, then the teardown and end
	// {"op":"scope_enter"}
	// {"op":"alloc","handle":1,"size":16}
	// {"op":"struct_init","handle":2,"size":32,"fields":[1,0]}
	// {"op":"release","target":1}
	// {"op":"param_register","name":"w","target":1}
	// {"op":"scope_exit"}
	// {"op":"param_release","name":"w"}
	// {"op":"end"}
}

// A calls file read back, as --replay reads it.
func ExampleReadCalls() {
	calls, err := drive.ReadCalls(strings.NewReader(`# a comment
{"op":"scope_enter"}
{"op":"alloc","handle":1,"size":0}
{"op":"release"}
`))
	fmt.Println(len(calls), err)
	// Output:
	// 0 line 4: release needs [target]
}
