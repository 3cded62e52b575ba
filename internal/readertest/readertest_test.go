package readertest

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// Repeat reads s n times, whatever the size of the reads, and is then
// at EOF.
func TestRepeat(t *testing.T) {
	cases := []struct {
		s string
		n int
	}{
		{"x", 0}, {"x", 1}, {"ab", 3}, {"é", 100000}, {"abc", (64 << 10) + 7}, {"", 5},
	}
	for _, c := range cases {
		want := strings.Repeat(c.s, c.n)
		for name, r := range map[string]io.Reader{
			"whole":    Repeat(c.s, c.n),
			"one byte": iotest.OneByteReader(Repeat(c.s, c.n)),
			"half":     iotest.HalfReader(Repeat(c.s, c.n)),
		} {
			got, err := io.ReadAll(r)
			if err != nil || string(got) != want {
				t.Errorf("Repeat(%q, %d), read %s: %d bytes (%v), want %d", c.s, c.n, name, len(got), err, len(want))
			}
		}
		if err := iotest.TestReader(Repeat(c.s, c.n), []byte(want)); err != nil {
			t.Errorf("Repeat(%q, %d): %v", c.s, c.n, err)
		}
	}
}

func TestConcat(t *testing.T) {
	got, err := io.ReadAll(Concat("a", Repeat("b", 3), "", strings.NewReader("c")))
	if err != nil || string(got) != "abbbc" {
		t.Errorf("Concat: %q (%v), want %q", got, err, "abbbc")
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "part 1 is a int") {
			t.Errorf("Concat of an int: panic %v, want one naming part 1", r)
		}
	}()
	Concat("a", 1)
}

// Measure counts what read allocates, and no more than a little else.
func TestMeasure(t *testing.T) {
	var keep []byte
	c := Measure(func() { keep = make([]byte, 8<<20) })
	if c.Alloc < 8<<20 || c.Alloc > 9<<20 {
		t.Errorf("Measure of an 8 MB allocation: %d bytes", c.Alloc)
	}
	if c := Measure(func() {}); c.Alloc > 64<<10 {
		t.Errorf("Measure of nothing: %d bytes", c.Alloc)
	}
	_ = keep
}
