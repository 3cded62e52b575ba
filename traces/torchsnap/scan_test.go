package torchsnap

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	ogorek "github.com/kisielk/og-rek"
)

// The scan's cost must bound what og-rek allocates decoding a pickle,
// garbage included, on the shapes that cost most per byte of input.
func TestCostBoundsDecoding(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MB")
	}
	const n = 1 << 18
	rep := func(s string) []byte { return bytes.Repeat([]byte(s), n) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	clean, err := os.ReadFile(filepath.Join("testdata", "clean-p4.pickle"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		p    []byte
	}{
		{"empty lists", cat([]byte("\x80\x04("), rep("]"), []byte("l."))},
		{"empty dicts", cat([]byte("\x80\x04("), rep("}"), []byte("l."))},
		{"dups", cat([]byte("\x80\x04]("), rep("2"), []byte("l."))},
		{"memo gets", cat([]byte("\x80\x04]\x94("), rep("h\x00"), []byte("l."))},
		{"memoize", cat([]byte("\x80\x04("), rep("N\x94"), []byte("l."))},
		{"dict items", cat([]byte("\x80\x04}("), bytes.Repeat([]byte("J\x00\x00\x00\x00N"), n), []byte("u."))},
		{"appends", cat([]byte("\x80\x04]("), rep("N"), []byte("e."))},
		{"long ints", cat([]byte("\x80\x04("), rep("\x8a\x09\x01\x02\x03\x04\x05\x06\x07\x08\x09"), []byte("l."))},
		{"strings", cat([]byte("\x80\x04("), rep("\x8c\x03abc"), []byte("l."))},
		{"a snapshot", clean},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := scan(tt.p)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			v, err := ogorek.NewDecoder(&sliceReader{b: tt.p}).Decode()
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			runtime.KeepAlive(v)
			// The decoder's read buffer and first stack are fixed costs.
			got := int64(after.TotalAlloc-before.TotalAlloc) - 64<<10
			if got > res.cost {
				t.Errorf("decoding %d bytes allocated %d bytes, over the scan's bound of %d", len(tt.p), got, res.cost)
			}
			t.Logf("%d bytes of pickle: %d allocated, bound %d", len(tt.p), got, res.cost)
		})
	}
}

// vizOps are the opcodes memory_viz's own unpickler (MemoryViz.js) reads.
var vizOps = map[string]bool{
	"PROTO": true, "APPEND": true, "APPENDS": true, "LIST": true, "TUPLE": true,
	"NEWFALSE": true, "NEWTRUE": true, "NONE": true, "BINGET": true, "BININT": true,
	"BININT1": true, "BININT2": true, "EMPTY_DICT": true, "EMPTY_LIST": true,
	"FRAME": true, "LONG1": true, "LONG_BINGET": true, "MARK": true, "MEMOIZE": true,
	"BINPUT": true, "LONG_BINPUT": true, "SETITEMS": true, "SETITEM": true, "DICT": true,
	"SHORT_BINUNICODE": true, "BINUNICODE": true, "STOP": true, "EMPTY_TUPLE": true,
	"TUPLE1": true, "TUPLE2": true, "TUPLE3": true, "BINFLOAT": true,
}

// The Writer uses only opcodes memory_viz reads, protocol 4, and integers
// of at most 8 bytes; this holds without Python (TestPythonReadsWriter
// checks it again with pickletools where python3 is at hand).
func TestWriterOpcodes(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	for i := range 2500 { // more than two APPENDS batches
		addr := uint64(1<<40 + i*512)
		if err := w.Write(Entry{Action: ActionAlloc, Addr: addr, Size: 512, Site: "a.py:1", TimeUS: 1 << 50}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close([]Segment{{Addr: 1 << 40, Size: 1 << 30, Blocks: []Block{{Addr: 1<<40 + 4096, Size: 1 << 20}}}}); err != nil {
		t.Fatal(err)
	}
	p := b.Bytes()
	if _, err := scan(p); err != nil {
		t.Fatal(err)
	}
	for at := 0; at < len(p); {
		info := accepted[p[at]]
		if !vizOps[info.name] {
			t.Fatalf("byte %d: opcode %s (0x%02x) is not one memory_viz reads", at, info.name, p[at])
		}
		if info.name == "PROTO" && p[at+1] != 4 {
			t.Fatalf("PROTO %d", p[at+1])
		}
		if info.name == "LONG1" && p[at+1] > 8 {
			t.Fatalf("byte %d: LONG1 of %d bytes", at, p[at+1])
		}
		n, _, err := argLen(p, at+1, info)
		if err != nil {
			t.Fatal(err)
		}
		at += 1 + n
	}
	r, err := NewReader(bytes.NewReader(p))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Stats().Entries; got != 2500 {
		t.Errorf("%d entries read back, want 2500", got)
	}
}
