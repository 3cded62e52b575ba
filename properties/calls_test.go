package properties

import (
	"reflect"
	"strings"
	"testing"
	"unicode"

	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// TestEveryRowIsInvoked: every call of flat's table has an invocation
// here, and every invocation a row there; a call added on one side only
// fails here, by name.
func TestEveryRowIsInvoked(t *testing.T) {
	for _, op := range traces.Ops() {
		row, inv := flat.CallOf(op), invocations[op]
		switch {
		case row != nil && inv.invoke == nil:
			t.Errorf("call %v: a row of flat's table (properties/flat/calls.go) but no invocation in calls.go: the harness cannot make it", op)
		case row == nil && inv.invoke != nil:
			t.Errorf("call %v: an invocation in calls.go but no row of flat's table (properties/flat/calls.go): no program makes it", op)
		}
	}
}

// TestOperandResolvers holds each operand kind's harness side complete:
// its resolution into the event, and a rapid generator.
func TestOperandResolvers(t *testing.T) {
	for _, o := range flat.Operands() {
		if int(o) >= len(resolvers) || resolvers[o] == nil {
			t.Errorf("operand %s: no resolver in calls.go", o)
			continue
		}
		rapid.Check(t, func(rt *rapid.T) {
			var st flat.Step
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
		if flat.CallOf(op) == nil {
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
