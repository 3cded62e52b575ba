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
