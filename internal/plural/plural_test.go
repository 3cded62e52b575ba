package plural

import (
	"math"
	"testing"
)

func TestCount(t *testing.T) {
	cases := []struct {
		got, want string
	}{
		{Count(0, "byte"), "0 bytes"},
		{Count(1, "byte"), "1 byte"},
		{Count(2, "new finding"), "2 new findings"},
		{Count(-1, "byte"), "-1 bytes"},
		{Count(uint64(1), "object"), "1 object"},
		{Count(uint64(math.MaxUint64), "byte"), "18446744073709551615 bytes"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestRate(t *testing.T) {
	for r, want := range map[float64]string{
		0: "0 programs/s", 0.6: "1 program/s", 1: "1 program/s", 1.4: "1 program/s", 1.5: "2 programs/s", 6350.2: "6350 programs/s",
	} {
		if got := Rate(r, "program"); got != want {
			t.Errorf("Rate(%v) = %q, want %q", r, got, want)
		}
	}
}
