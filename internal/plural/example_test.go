package plural_test

import (
	"fmt"

	"github.com/tlcheck/tlcheck/internal/plural"
)

func ExampleCount() {
	fmt.Println(plural.Count(1, "leak"))
	fmt.Println(plural.Count(uint64(4096), "byte"))
	// Output:
	// 1 leak
	// 4096 bytes
}
