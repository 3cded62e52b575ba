package properties

import (
	"reflect"
	"strings"
	"testing"
	"unicode"

	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/impl"
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
		if c.invoke == nil {
			t.Errorf("call %s: no invoke: the harness cannot make it", name)
		}
		if c.needs != nil && callOf(c.instead) == nil {
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

// TestOperandRows holds each operand kind complete: its byte codec, its
// listing, its shrinking, its resolution, and a rapid generator.
func TestOperandRows(t *testing.T) {
	for o := operand(1); int(o) < len(operandRows); o++ {
		r := o.row()
		if r.name == "" || r.decode == nil || r.encode == nil || r.format == nil || r.parse == nil ||
			r.simpler == nil || r.resolve == nil {
			t.Errorf("operand %d (%q): a function of its row is missing", o, r.name)
			continue
		}
		rapid.Check(t, func(rt *rapid.T) {
			var st Step
			drawOperand(rt, o, &st) // panics, naming the operand, without a generator
		})
	}
}

// TestEveryRuntimeCallHasARow: every method of impl.Runtime that makes a
// call of the trace format (ScopeEnter: scope_enter, ...) has a row, so
// that generated programs reach every layer the runtime has.
func TestEveryRuntimeCallHasARow(t *testing.T) {
	rt := reflect.TypeOf(&impl.Runtime{})
	for i := range rt.NumMethod() {
		m := rt.Method(i).Name
		op, ok := traces.ParseOp(snake(m))
		if !ok {
			continue // State and the like: not calls
		}
		if callOf(op) == nil {
			t.Errorf("impl.Runtime.%s makes %v, which no row of calls generates", m, op)
		}
	}
}

// snake turns ScopeEnter into scope_enter.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
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
