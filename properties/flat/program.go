package flat

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/traces"
)

// A Program is a sequence of runtime calls. Its operands name objects
// indirectly, by position among what the program knows when the step runs
// (see Ref), so every subsequence of a program is again a meaningful
// program: that is what lets the shrinker drop steps freely.
type Program struct {
	Steps []Step
}

// Step is one call: any call of the table in calls.go, with the operands
// its row lists (alloc: Size; struct_init: Size, Fields; release: Target;
// param_register: Name, Target; ...). Fields a call does not take are zero.
//
// The byte-sized fields come first, in one word, so that a Step takes 80
// bytes rather than 104: a fuzz body decodes some fifty a program.
type Step struct {
	Op     traces.Op
	Target Ref
	Method bool  // layer 3, fn_enter: a method's frame (impl.Runtime.MethodEnter)
	Var    uint8 // layer 3, read, write: which of the variables live now, oldest first

	Size   uint64 // bytes; 0 is a zero-sized type, which the runtime represents as NULL
	Name   string
	Fields []Ref
	Lives  []uint8 // layer 3, fn_enter: per variable, the statements it lives after the one defining it (see frames.go)
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

// names are the parameter names programs use. They are few on purpose,
// so that re-registering a name and releasing a name are common.
var names = []string{"w", "b", "g"}

// Names returns the parameter names programs use.
func Names() []string { return slices.Clone(names) }

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
// "param_register w live[1]", "struct_init 32 [live[0] null]": the op,
// then its operands in its row's order. ParseProgram reads it back.
func (s Step) String() string {
	var b strings.Builder
	b.WriteString(s.Op.String())
	if c := CallOf(s.Op); c != nil {
		for _, o := range c.operands {
			b.WriteByte(' ')
			b.WriteString(o.row().format(s))
		}
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

// Clone returns a deep copy, so that shrinking can edit candidates freely.
func (p Program) Clone() Program {
	steps := make([]Step, len(p.Steps))
	for i, s := range p.Steps {
		s.Fields = append([]Ref(nil), s.Fields...)
		s.Lives = append([]uint8(nil), s.Lives...)
		steps[i] = s
	}
	return Program{Steps: steps}
}

// ParseProgram reads a program listing as Program.String writes it: one
// step a line, each optionally numbered ("  3  release live[0]"); blank
// lines and lines starting with # are skipped. It is how saved programs,
// such as the fuzz seeds' readable forms, come back as Programs.
func ParseProgram(text string) (Program, error) {
	var p Program
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		toks := tokens(line)
		if _, err := strconv.Atoi(toks[0]); err == nil {
			toks = toks[1:]
		}
		s, err := parseStep(toks)
		if err != nil {
			return Program{}, fmt.Errorf("line %d: %q: %w", n+1, line, err)
		}
		p.Steps = append(p.Steps, s)
	}
	return p, nil
}

func parseStep(toks []string) (Step, error) {
	if len(toks) == 0 {
		return Step{}, errors.New("no op")
	}
	op, ok := traces.ParseOp(toks[0])
	c := CallOf(op)
	if !ok || c == nil || c.width == 0 {
		return Step{}, fmt.Errorf("op %q: programs call %v", toks[0], Ops())
	}
	s := Step{Op: op}
	if len(toks)-1 != len(c.operands) {
		return Step{}, fmt.Errorf("%v takes %d operands, got %d", op, len(c.operands), len(toks)-1)
	}
	for i, o := range c.operands {
		if err := o.row().parse(toks[i+1], &s); err != nil {
			return Step{}, err
		}
	}
	return s, nil
}

// tokens splits a line at spaces outside brackets, so that a field list
// "[live[0] null]" or a frame's lifetimes "[1 0 2]" is one token.
func tokens(line string) []string {
	var out []string
	depth, start := 0, -1
	for i, r := range line {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case r == ' ' || r == '\t':
			if depth == 0 {
				if start >= 0 {
					out = append(out, line[start:i])
				}
				start = -1
				continue
			}
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, line[start:])
	}
	return out
}
