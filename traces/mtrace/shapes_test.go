package mtrace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tlcheck/tlcheck/traces"
)

// TestParseFastTakesGlibcLines checks that the fast path takes the lines
// glibc writes, so that it cannot go unused unnoticed, and reads them as
// written.
func TestParseFastTakesGlibcLines(t *testing.T) {
	const py = "/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0:(PyMem_RawMalloc+0x1a)[0x1af17a]"
	tests := []struct {
		line string
		want traces.Event
	}{
		{"@ " + py + " + 0x55b8e54964a0 0x20", traces.Event{Op: traces.OpMalloc, Addr: 0x55b8e54964a0, Size: 0x20, HasSize: true, Site: py}},
		{"@ " + py + " > 0x7f3a1c000b70 0x1f4000", traces.Event{Op: traces.OpMalloc, Addr: 0x7f3a1c000b70, Size: 0x1f4000, HasSize: true, Site: py}},
		{"@ " + py + " - 0x55b8e54964a0", traces.Event{Op: traces.OpFree, Addr: 0x55b8e54964a0, Site: py}},
		{"@ " + py + " < 0x55b8e54964a0", traces.Event{Op: traces.OpFree, Addr: 0x55b8e54964a0, Site: py}},
		{"@ ./prog:[0x401136] + 0x4052a0 0x1", traces.Event{Op: traces.OpMalloc, Addr: 0x4052a0, Size: 1, HasSize: true, Site: "./prog:[0x401136]"}},
		{"@ a - 0x1", traces.Event{Op: traces.OpFree, Addr: 1, Site: "a"}},
		{"@ a + 0x1 0x2", traces.Event{Op: traces.OpMalloc, Addr: 1, Size: 2, HasSize: true, Site: "a"}},
		{"@ a + 0xfffffffffffffff 0xABC", traces.Event{Op: traces.OpMalloc, Addr: 0xfffffffffffffff, Size: 0xabc, HasSize: true, Site: "a"}},
	}
	for _, tt := range tests {
		r := NewReader(nil)
		for range 2 { // the first time through the cache, then from it
			var ev traces.Event
			if !r.parseFast([]byte(tt.line), &ev) {
				t.Fatalf("%q: fast path declined it", tt.line)
			}
			if diff := cmp.Diff(tt.want, ev); diff != "" {
				t.Errorf("%q (-want +got):\n%s", tt.line, diff)
			}
		}
		checkFastAgrees(t, tt.line)
	}
}

// TestParseFastDeclines checks lines the fast path must leave to parse:
// forms glibc does not write, and lines that are not what they seem.
func TestParseFastDeclines(t *testing.T) {
	for _, line := range []string{
		"",
		"@",
		"@ ",
		"+ 0x10 0x20",       // no caller
		"@ a + 0x10 0",      // a bare size
		"@ a + 0X10 0x20",   // upper-case prefix
		"@ a + 0x0 0x20",    // a failed allocation yields nothing
		"@ a 1 0x2",         // a number where the address should be
		"@ a 0x1 0x2",       // no operation
		"@ a + 0x1 0x2 0x3", // a number too many
		"@ a - 0x1 0x2",     // a free with a size
		"@ a b - 0x1",       // a blank inside the caller
		"@  - 0x1",          // no caller
		"@ a\t- 0x1",        // a tab
		"@ a - 0x1\r",       // a carriage return
		"@ a - 0x10000000000000000",
		"@ a - 0x0000000000000001", // 16 digits: parse reads them
		"@ a + 0x1 0x0000000000000002",
		"@ - 0x1",
		"@ a-0x1",
		"@ a +0x1 0x2",
		"@ a ++ 0x1 0x2",
	} {
		var ev traces.Event
		if NewReader(nil).parseFast([]byte(line), &ev) {
			t.Errorf("%q: fast path took it as %+v", line, ev)
		}
	}
}
