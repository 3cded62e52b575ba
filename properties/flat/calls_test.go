package flat

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// TestCallTable holds each row of calls complete and the op bytes owned
// once: a call added with a step left out fails here, by name.
func TestCallTable(t *testing.T) {
	var owner [256]traces.Op
	seen := map[traces.Op]bool{}
	for _, c := range calls {
		name := c.op.String()
		if seen[c.op] {
			t.Errorf("call %s: two rows", name)
		}
		seen[c.op] = true
		if c.needs != nil && CallOf(c.instead) == nil {
			t.Errorf("call %s: instead %v is not a call", name, c.instead)
		}
		if c.width > 0 && c.code+c.width > reservedCode {
			t.Errorf("call %s: op bytes %d..%d reach into the reserved range from %d", name, c.code, c.code+c.width-1, reservedCode)
		}
		if c.width > 0 && c.width < 4 {
			t.Errorf("call %s: %d op bytes; a call needs 4, one of which keeps a misuse", name, c.width)
		}
		for b := c.code; b < c.code+c.width && b < len(owner); b++ {
			if owner[b] != 0 {
				t.Errorf("op byte %d: owned by %v and %s", b, owner[b], name)
			}
			owner[b] = c.op
		}
		for _, o := range c.operands {
			if int(o) >= len(operandRows) || o == 0 {
				t.Errorf("call %s: operand %d has no row", name, o)
			}
		}
	}
	for b := range reservedCode {
		if owner[b] == 0 {
			t.Errorf("op byte %d: no call owns it; bytes below %d belong to calls, so that saved programs keep their meaning", b, reservedCode)
		}
	}
	if !seen[traces.OpEnd] {
		t.Error("no row for end: the harness ends every run with it")
	}
}

// TestOperandRows holds each operand kind's syntax complete: its byte
// codec, its listing and its shrinking. (How it is resolved and drawn is
// package properties' part: TestOperandResolvers there.)
func TestOperandRows(t *testing.T) {
	for _, o := range Operands() {
		r := o.row()
		if r.name == "" || r.decode == nil || r.encode == nil || r.format == nil || r.parse == nil || r.simpler == nil {
			t.Errorf("operand %d (%q): a function of its row is missing", o, r.name)
		}
	}
}

// TestParseProgram reads back what Program.String writes.
func TestParseProgram(t *testing.T) {
	for _, p := range []Program{{}, Decode([]byte("\x00\x23\x05\x47\x01\x03\x00\xe0\xf8\xa2\xe2\x02\xb2\x00"))} {
		got, err := ParseProgram(p.String())
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != p.String() {
			t.Errorf("ParseProgram(%q) = %q", p.String(), got.String())
		}
	}
	for _, bad := range []string{"frobnicate", "alloc", "alloc 16 17", "release live[x]", "param_register zz live[0]", "struct_init 16 live[0]"} {
		if _, err := ParseProgram(bad); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ParseProgram(%q) = %v, want an error naming line 1", bad, err)
		}
	}
}
