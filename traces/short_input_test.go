package traces

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// shortSaying is a reader that claims to hold fewer bytes than it does.
type shortSaying struct {
	*bytes.Reader
	claim int
}

func (s shortSaying) Len() int { return s.claim }

// TestLexerSizesToInput: a reader that knows its length gets a buffer no
// larger than its input, and tokens longer than the buffer (an input whose
// Len says less than it holds) are still read whole.
func TestLexerSizesToInput(t *testing.T) {
	site := strings.Repeat("s", 3000)
	trace := `{"format":"tlcheck-trace","version":1}` + "\n" +
		`{"op":"malloc","addr":"0x10","size":8,"site":"` + site + `"}` + "\n"
	for _, c := range []struct {
		name string
		src  interface {
			Read([]byte) (int, error)
		}
		most int
	}{
		{"bytes.Reader", bytes.NewReader([]byte(trace)), len(trace) + 1},
		{"a reader that says 1", shortSaying{bytes.NewReader([]byte(trace)), 1}, bufSize},
	} {
		rd, err := NewReader(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var ev Event
		if err := rd.Next(&ev); err != nil || ev.Site != site {
			t.Fatalf("%s: Next = %v, site of %d bytes", c.name, err, len(ev.Site))
		}
		if n := cap(rd.lex.buf); n > c.most {
			t.Errorf("%s: a buffer of %d bytes for %d bytes of input", c.name, n, len(trace))
		}
	}
}

// TestInternerGrows: the interner starts small and grows with the strings
// it makes, up to its bound, and still finds what it holds.
func TestInternerGrows(t *testing.T) {
	var in interner
	for range 100 {
		in.intern([]byte("a0"))
	}
	if n := len(in.slots); n != minInternSets*internWays {
		t.Errorf("%d slots after one string, want %d", n, minInternSets*internWays)
	}
	for i := range 10 * internSets * internWays {
		if s := in.intern([]byte(strconv.Itoa(i))); s != strconv.Itoa(i) {
			t.Fatalf("intern(%d) = %q", i, s)
		}
	}
	if n := len(in.slots); n != internSets*internWays {
		t.Errorf("%d slots after many strings, want the bound %d", n, internSets*internWays)
	}
}
