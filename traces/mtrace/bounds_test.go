package mtrace

import (
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// repeat reads s n times, so that a test reads a long line it never holds.
type repeat struct {
	b    []byte
	n, i int
}

func rep(s string, n int) *repeat {
	return &repeat{b: []byte(strings.Repeat(s, max(1, (64<<10)/len(s)))), n: n * len(s)}
}

func (r *repeat) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && r.n > 0 {
		c := copy(p[k:min(len(p), k+r.n)], r.b[r.i:])
		k += c
		r.n -= c
		r.i = (r.i + c) % len(r.b)
	}
	return k, nil
}

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
			return io.MultiReader(strings.NewReader("= Start\n@ ./a.out:[0x4011d6] + 0x10 0x8 "), rep("j", big), strings.NewReader("\n"))
		}, 2, ""},
		{"a long caller", func() io.Reader {
			return io.MultiReader(strings.NewReader("= Start\n+ 0x10 0x8\n@ "), rep("c", big), strings.NewReader(" + 0x20 0x8\n"))
		}, 3, "caller"},
		{"a long final line", func() io.Reader {
			return io.MultiReader(strings.NewReader("= Start\n"), rep("x", big))
		}, 2, "op"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			r := NewReader(tt.in())
			var err error
			for err == nil {
				var ev traces.Event
				err = r.Next(&ev)
			}
			runtime.ReadMemStats(&after)
			var te *traces.Error
			if !asError(err, &te) || te.Line != tt.line || te.Field != tt.field || !strings.Contains(err.Error(), "a line longer than 1048576 bytes") {
				t.Fatalf("error %v, want one at line %d, field %q", err, tt.line, tt.field)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
				t.Errorf("reading a long line allocated %d MB", alloc>>20)
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
