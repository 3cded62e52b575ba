package exitcode_test

import (
	"testing"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/internal/exitcode"
)

func TestFor(t *testing.T) {
	for _, c := range []struct {
		s    check.Status
		want int
	}{
		{check.Pass, 0},
		{check.Fail, 1},
		{check.Unreadable, 2},
		{check.Status(99), 2}, // unknown: never clean
	} {
		if got := exitcode.For(c.s); got != c.want {
			t.Errorf("For(%v) = %d, want %d", c.s, got, c.want)
		}
	}
}
