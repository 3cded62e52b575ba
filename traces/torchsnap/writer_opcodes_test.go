package torchsnap

import (
	"bytes"
	"testing"
)

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
