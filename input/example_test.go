package input_test

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/model"
)

// Open tells the formats apart by their first bytes: here a glibc mtrace
// log on standard input, which the model then checks.
func ExampleOpen() {
	const log = "= Start\n@ ./prog:[0x11ce] + 0x4052a0 0x20\n@ ./prog:[0x11f2] - 0x4052a0\n@ ./prog:[0x11f2] - 0x4052a0\n= End\n"
	in, err := input.Open("-", input.Options{Stdin: strings.NewReader(log)})
	if err != nil {
		panic(err)
	}
	defer in.Close()
	rep, err := model.Replay(in)
	if err != nil {
		panic(in.Explain(err))
	}
	fmt.Println(in.Name(), "read as", in.Format())
	for _, v := range rep.Violations {
		fmt.Println(v.Kind, "at", v.Site)
	}
	// Output:
	// <stdin> read as mtrace
	// double-free at ./prog:[0x11f2]
}
