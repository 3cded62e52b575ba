// Package texttest checks text a test has captured: a report, a
// command's output. It is for tests only, as testing/iotest is.
package texttest

import (
	"strings"
	"testing"
)

// Lines fails t unless each of want is a whole line of out, in the order
// given; lines of out between them are free. It names the first line
// missing (or out of order) and shows out.
func Lines(t testing.TB, out string, want []string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	i := 0
	for _, w := range want {
		for i < len(lines) && lines[i] != w {
			i++
		}
		if i == len(lines) {
			t.Errorf("missing line (or out of order) %q in:\n%s", w, out)
			return
		}
		i++
	}
}
