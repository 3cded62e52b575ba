package traces

import (
	"io"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/readertest"
)

// No line costs the reader more than a fixed amount of memory, whatever
// its length: a string over MaxString in a field the format defines is an
// error naming the line and the field; one the format ignores (an unknown
// field's value or key, a long number there) is read past. Each input is
// 64 MB (8 MB of escapes), streamed; the reader may allocate 8 MB for it.
func TestReadLongLinesBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 400 MB")
	}
	const big = 64 << 20
	head := plainHeader + "\n"
	tests := []struct {
		name string
		in   func() io.Reader
		want string // the error, or "" for two events read
	}{
		{"a 64 MB site", func() io.Reader {
			return readertest.Concat(head, `{"op":"malloc","addr":"0x10","size":8,"site":"`, readertest.Repeat("x", big), "\"}\n")
		}, `line 2: event 0: field "site": a string longer than 1048576 bytes`},
		{"an 8 MB site of escapes", func() io.Reader {
			return readertest.Concat(head, `{"op":"end","site":"`, readertest.Repeat(`\u00e9`, 8<<20/6), "\"}\n")
		}, `line 2: event 0: field "site": a string longer than 1048576 bytes`},
		{"a 64 MB unknown field", func() io.Reader {
			return readertest.Concat(head, `{"op":"malloc","addr":"0x10","size":8,"note":"`, readertest.Repeat("é", big/2), "\"}\n", `{"op":"end"}`+"\n")
		}, ""},
		{"a 64 MB unknown key", func() io.Reader {
			return readertest.Concat(head, `{"op":"malloc","addr":"0x10","size":8,"`, readertest.Repeat("k", big), `":[1,"x"]}`+"\n", `{"op":"end"}`+"\n")
		}, ""},
		{"a 64 MB number in an unknown field", func() io.Reader {
			return readertest.Concat(head, `{"op":"malloc","addr":"0x10","size":8,"n":1.`, readertest.Repeat("0", big), "e5}\n", `{"op":"end"}`+"\n")
		}, ""},
		{"a 64 MB number for a size", func() io.Reader {
			return readertest.Concat(head, `{"op":"malloc","addr":"0x10","size":1`, readertest.Repeat("0", big), "}\n")
		}, `line 2: event 0: field "size": invalid JSON: a number of more than 1048576 bytes`},
		{"invalid UTF-8 at the end of a 64 MB unknown field", func() io.Reader {
			return readertest.Concat(head, `{"op":"end","note":"`, readertest.Repeat("é", big/2), "\xc3\"}\n")
		}, "not UTF-8"},
		{"a 64 MB op", func() io.Reader {
			return readertest.Concat(head, `{"op":"`, readertest.Repeat("m", big), "\"}\n")
		}, `line 2: event 0: field "op": a string longer than 1048576 bytes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var evs []Event
			var err error
			cost := readertest.Measure(func() { _, evs, _, err = readAll(tt.in()) })
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.want == "" && len(evs) != 2:
				t.Fatalf("%d events, want 2", len(evs))
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error %v\nwant one containing %q", err, tt.want)
			}
			if cost.Alloc > 8<<20 {
				t.Errorf("reading a long line allocated %d MB", cost.Alloc>>20)
			}
		})
	}
}

// A block whose address plus size passes 2^64 is an input error, for
// every op with a size; one that ends at 2^64 exactly is not.
func TestReadWrapAround(t *testing.T) {
	tests := []struct {
		event, want string
	}{
		{`{"op":"malloc","addr":"0xffffffffffffff00","size":257}`, `line 2: event 0: field "size": address 0xffffffffffffff00 plus size 257 passes 2^64`},
		{`{"op":"malloc","addr":"0xffffffffffffff00","size":256}`, ""},
		{`{"op":"realloc","addr":"0x10","new_addr":"0xfffffffffffffff0","size":17}`, `field "size": address 0xfffffffffffffff0 plus size 17 passes 2^64`},
		{`{"op":"realloc","addr":"0xfffffffffffffff0","new_addr":"0x10","size":17}`, ""},
		{`{"op":"read","addr":"0xffffffffffffffff","size":2}`, `field "size": address 0xffffffffffffffff plus size 2 passes 2^64`},
		{`{"op":"read","addr":"0xffffffffffffffff"}`, ""},
		{`{"op":"alloc","addr":"0xffffffffffffffff","size":2}`, "passes 2^64"},
		{`{"op":"struct_init","addr":"0xffffffffffffffff","size":2,"fields":[]}`, "passes 2^64"},
		{`{"op":"arena_get","slot":0,"addr":"0xffffffffffffffff","size":2}`, "passes 2^64"},
		{`{"op":"dev_malloc","addr":"0xffffffffffffffff","size":2}`, "passes 2^64"},
		{`{"op":"pool_get","addr":"0xffffffffffffffff","size":2}`, "passes 2^64"},
	}
	for _, tt := range tests {
		_, _, _, err := readAll(strings.NewReader(stream(plainHeader, tt.event)))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: error %v", tt.event, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v\nwant one containing %q", tt.event, err, tt.want)
		}
	}
}
