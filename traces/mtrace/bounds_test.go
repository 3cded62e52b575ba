package mtrace

import (
	"io"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/readertest"
	"github.com/tlcheck/tlcheck/traces"
)

// No line costs the reader more than a fixed amount of memory: a line
// over MaxLine is an error naming it (and the caller, where the caller is
// what is long), found after MaxLine bytes, whatever the line's length.
// Each input is 64 MB, streamed.
func TestReadLongLinesBounded(t *testing.T) {
	const big = 64 << 20
	tests := []struct {
		name  string
		in    func() io.Reader
		line  int
		field string
	}{
		{"junk after an operation", func() io.Reader {
			return readertest.Concat("= Start\n@ ./a.out:[0x4011d6] + 0x10 0x8 ", readertest.Repeat("j", big), "\n")
		}, 2, ""},
		{"a long caller", func() io.Reader {
			return readertest.Concat("= Start\n+ 0x10 0x8\n@ ", readertest.Repeat("c", big), " + 0x20 0x8\n")
		}, 3, "caller"},
		{"a long final line", func() io.Reader {
			return readertest.Concat("= Start\n", readertest.Repeat("x", big))
		}, 2, "op"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			cost := readertest.Measure(func() {
				r := NewReader(tt.in())
				for err == nil {
					var ev traces.Event
					err = r.Next(&ev)
				}
			})
			var te *traces.Error
			if !asError(err, &te) || te.Line != tt.line || te.Field != tt.field || !strings.Contains(err.Error(), "a line longer than 1048576 bytes") {
				t.Fatalf("error %v, want one at line %d, field %q", err, tt.line, tt.field)
			}
			if cost.Alloc > 8<<20 {
				t.Errorf("reading a long line allocated %d MB", cost.Alloc>>20)
			}
		})
	}
}

func asError(err error, te **traces.Error) bool {
	e, ok := err.(*traces.Error)
	*te = e
	return ok
}

// An allocation whose address plus size passes 2^64 is an input error.
func TestReadWrapAround(t *testing.T) {
	_, err := readAll("@ ./a.out:[0x4011d6] + 0xfffffffffffffff0 0x20\n")
	if err == nil || !strings.Contains(err.Error(), `field "size": address 0xfffffffffffffff0 plus size 0x20 passes 2^64`) {
		t.Errorf("error %v", err)
	}
	if _, err := readAll("@ ./a.out:[0x4011d6] + 0xfffffffffffffff0 0x10\n"); err != nil {
		t.Errorf("a block that ends at 2^64: %v", err)
	}
}
