package drive

import (
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/properties/flat"
)

// TestEveryProgramCallIsAProtocolCall fails, naming the call, when a row
// added to properties' call table has not reached the protocol: callRows
// here, the table of PROTOCOL.md, protocol.schema.json (TestSchemaAndDoc
// holds its enum to CallOps) and impldriver (TestImplDriverClean runs every
// call).
func TestEveryProgramCallIsAProtocolCall(t *testing.T) {
	doc, err := os.ReadFile("PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range flat.Ops() {
		if _, ok := callRows[op]; !ok {
			t.Errorf("call %v: no row in callRows (protocol.go)", op)
		}
		if !strings.Contains(string(doc), "| `"+op.String()+"`") && !strings.Contains(string(doc), "`, `"+op.String()+"`") {
			t.Errorf("call %v: not in PROTOCOL.md's table of calls", op)
		}
	}
	// Every generated call survives the protocol: lowered, written, read back.
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		_, calls := Lower(flat.Generate(r), nil)
		for _, c := range calls {
			line := c.appendJSON(nil, 7)
			back, id, reset, err := ParseCall(line)
			if err != nil || id != 7 || reset || !slices.Equal(back.AppendJSON(nil), c.AppendJSON(nil)) {
				t.Fatalf("%s read back as %s (id %d, reset %v, %v)", line, back.AppendJSON(nil), id, reset, err)
			}
		}
	}
}

// TestCallCodecHasEveryField: every field a row of callRows lists has
// one row of callCodec, its key unique, so that writing, reading and
// naming a call's fields all know it.
func TestCallCodecHasEveryField(t *testing.T) {
	var all callField
	for _, row := range callRows {
		all |= row.fields
	}
	keys := map[string]bool{}
	for _, r := range callCodec.rows {
		if keys[r.key] {
			t.Errorf("field %q: two rows of callCodec", r.key)
		}
		keys[r.key] = true
	}
	for bit := callField(1); bit != 0 && bit <= all; bit <<= 1 {
		if all&bit == 0 {
			continue
		}
		n := 0
		for _, r := range callCodec.rows {
			if r.bit == bit {
				n++
			}
		}
		switch {
		case n == 0:
			t.Errorf("field bit %#x: a row of callRows lists it, and no row of callCodec (protocol.go) writes or reads it", uint(bit))
		case n > 1:
			t.Errorf("field %s: %d rows of callCodec, want 1", callCodec.names(bit), n)
		}
	}
}
