package properties

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/traces"
)

// A Program is a sequence of layer-2 calls on a runtime. Its operands name
// objects indirectly, by position among what the program knows when the step
// runs (see Ref), so every subsequence of a program is again a meaningful
// program: that is what lets Shrink drop steps freely.
type Program struct {
	Steps []Step
}

// Step is one call. Which fields matter depends on Op:
//
//	scope_enter, scope_exit  (none)
//	alloc                    Size
//	struct_init              Size, Fields
//	acquire, release,
//	register, unregister     Target
//	param_register           Name, Target
//	param_release            Name
type Step struct {
	Op     traces.Op
	Size   uint64 // bytes; 0 is a zero-sized type, which the runtime represents as NULL
	Target Ref
	Name   string
	Fields []Ref
}

// Pick says which of the objects a program knows a Ref chooses among.
type Pick uint8

const (
	// Live chooses among the objects alive now, oldest first.
	Live Pick = iota
	// Dead chooses among addresses whose object has died and that hold no
	// object now: the operand of a misuse (release of a dead object, ...).
	Dead
	// Null is NULL, the zero-sized type: every call on it is a no-op.
	Null
)

// Ref names an operand: the Index-th object (modulo their number) of those
// that Pick chooses among. When there are none, a Dead ref falls back to the
// live objects and a Live ref to NULL, so a Ref always names something.
type Ref struct {
	Pick  Pick
	Index uint8
}

// Ops lists the calls a Program may make, in the contract's order.
func Ops() []traces.Op {
	return []traces.Op{
		traces.OpScopeEnter, traces.OpScopeExit, traces.OpAlloc, traces.OpStructInit,
		traces.OpAcquire, traces.OpRelease, traces.OpRegister, traces.OpUnregister,
		traces.OpParamRegister, traces.OpParamRelease,
	}
}

// Names are the parameter names programs use. They are few on purpose, so
// that re-registering a name and releasing a name are common.
var Names = []string{"w", "b", "g"}

func (r Ref) String() string {
	switch r.Pick {
	case Dead:
		return fmt.Sprintf("dead[%d]", r.Index)
	case Null:
		return "null"
	}
	return fmt.Sprintf("live[%d]", r.Index)
}

// String writes the step as it reads in a program listing: "alloc 16",
// "param_register w live[1]", "struct_init 32 [live[0] null]".
func (s Step) String() string {
	var b strings.Builder
	b.WriteString(s.Op.String())
	switch s.Op {
	case traces.OpAlloc:
		fmt.Fprintf(&b, " %d", s.Size)
	case traces.OpStructInit:
		fmt.Fprintf(&b, " %d [", s.Size)
		for i, f := range s.Fields {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(f.String())
		}
		b.WriteByte(']')
	case traces.OpAcquire, traces.OpRelease, traces.OpRegister, traces.OpUnregister:
		fmt.Fprintf(&b, " %v", s.Target)
	case traces.OpParamRegister:
		fmt.Fprintf(&b, " %s %v", s.Name, s.Target)
	case traces.OpParamRelease:
		fmt.Fprintf(&b, " %s", s.Name)
	}
	return b.String()
}

// String lists the program, one step a line.
func (p Program) String() string {
	var b strings.Builder
	for i, s := range p.Steps {
		fmt.Fprintf(&b, "%3d  %v\n", i, s)
	}
	return b.String()
}

// clone returns a deep copy, so that shrinking can edit candidates freely.
func (p Program) clone() Program {
	steps := make([]Step, len(p.Steps))
	for i, s := range p.Steps {
		s.Fields = append([]Ref(nil), s.Fields...)
		steps[i] = s
	}
	return Program{Steps: steps}
}
