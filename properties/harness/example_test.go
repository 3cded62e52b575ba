package harness_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/properties/harness"
)

// digits is a toy language, defined here to show what a language is: a
// program is a list of digits, and its one property, NoSeven, says that
// no digit is 7. A real language runs its program on the runtime with
// the model as oracle; the rest is the same.
func digits() harness.Language[[]int] {
	return harness.Language[[]int]{
		Name: "digits", Unit: "digits", Noun: "program", Step: "digit",
		Rand: func(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x646967)) },
		Generate: func(r *rand.Rand, _ int) []int {
			p := make([]int, 1+r.IntN(8))
			for i := range p {
				p[i] = r.IntN(10)
			}
			return p
		},
		Run: func(p []int) *harness.Failure {
			if i := slices.Index(p, 7); i >= 0 {
				return &harness.Failure{Property: "NoSeven", Message: "digit " + strconv.Itoa(i) + " is 7", Call: i}
			}
			return nil
		},
		Candidates: func(p []int) [][]int { // each digit left out in turn
			var c [][]int
			for i := range p {
				c = append(c, slices.Delete(slices.Clone(p), i, i+1))
			}
			return c
		},
		Len:  func(p []int) int { return len(p) },
		List: func(p []int) string { return fmt.Sprint(p) + "\n" },
		Parse: func(text string) ([]int, error) {
			var p []int
			for _, f := range strings.Fields(strings.Trim(text, "[]\n")) {
				d, err := strconv.Atoi(f)
				if err != nil {
					return nil, err
				}
				p = append(p, d)
			}
			return p, nil
		},
		Counterexample: func(p []int, _ *harness.Failure) (string, int) { return fmt.Sprint(p), len(p) },
		Against:        "the digits", Label: "digits",
	}
}

// A language is searched, shrunk and measured by the one engine.
func Example() {
	l := digits()
	p, f, n := harness.Search(l, 1, func(n int) bool { return n < 100 })
	small, sf := harness.Shrink(l, p, f)
	text, size := l.Counterexample(small, sf)
	fmt.Println(n > 0, sf.Property, text, size, l.Unit)
	fmt.Println(harness.Reproduce("replay", "my dir/x.jsonl"))
	// Output:
	// true NoSeven [7] 1 digits
	// reproduce: tlcheck replay 'my dir/x.jsonl'
}
