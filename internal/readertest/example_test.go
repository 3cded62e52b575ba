package readertest_test

import (
	"bufio"
	"fmt"

	"github.com/tlcheck/tlcheck/internal/readertest"
)

// A 64 MB line, streamed: the scanner refuses it at its limit, and
// reading it costs the scanner's buffer, not the line.
func Example() {
	in := readertest.Concat("start\n", readertest.Repeat("x", 64<<20), "\n")
	var lines int
	var err error
	cost := readertest.Measure(func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines++
		}
		err = sc.Err()
	})
	fmt.Println(lines, err, cost.Alloc < 1<<20)
	// Output:
	// 1 bufio.Scanner: token too long true
}
