package flat

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// An Operand is a kind of argument a call takes. Each kind is one row of
// operandRows: how it is decoded from bytes and encoded back, listed and
// parsed, and simplified by the shrinker. How it is resolved into the
// event the call makes is the caller's (package properties against impl's
// runtime, Lower for the calls of another process).
type Operand uint8

const (
	OperandSize     Operand = iota + 1 // Step.Size: the size of a new object
	OperandFields                      // Step.Fields: 0 to 3 refs, a struct's fields
	OperandTarget                      // Step.Target: the object the call acts on
	OperandName                        // Step.Name: any parameter name
	OperandHeldName                    // Step.Name: mostly a name registered now
	OperandKind                        // Step.Method: a function's frame or a method's
	OperandLives                       // Step.Lives: the frame's variables' lifetimes, which the planner plans
	OperandVar                         // Step.Var: a variable live now, through which to access
)

type operandRow struct {
	name string
	// decode reads the operand's bytes into s; encode appends bytes that
	// decode to s's operand in shape sh.
	decode func(d *decoder, s *Step)
	encode func(out []byte, s Step, sh Shape) []byte
	// format writes the operand as a program listing shows it; parse reads
	// that back.
	format func(s Step) string
	parse  func(tok string, s *Step) error
	// simpler returns versions of s with this operand one step simpler.
	simpler func(s Step) []Step
}

var operandRows = [...]operandRow{
	OperandSize: {name: "size",
		decode: func(d *decoder, s *Step) { s.Size = sizeTable[d.byte()%8] },
		encode: func(out []byte, s Step, _ Shape) []byte { return append(out, sizeByte(s.Size)) },
		format: func(s Step) string { return strconv.FormatUint(s.Size, 10) },
		parse: func(tok string, s *Step) (err error) {
			s.Size, err = strconv.ParseUint(tok, 10, 64)
			return err
		},
		simpler: func(s Step) []Step {
			if s.Size == sizeTable[0] {
				return nil
			}
			s.Size = sizeTable[0]
			return []Step{s}
		}},
	OperandFields: {name: "fields",
		decode: func(d *decoder, s *Step) {
			for range int(d.byte() % 4) {
				s.Fields = append(s.Fields, d.ref())
			}
		},
		encode: func(out []byte, s Step, _ Shape) []byte {
			out = append(out, byte(len(s.Fields)))
			for _, f := range s.Fields {
				out = append(out, refByte(f))
			}
			return out
		},
		format: func(s Step) string {
			fs := make([]string, len(s.Fields))
			for i, f := range s.Fields {
				fs[i] = f.String()
			}
			return "[" + strings.Join(fs, " ") + "]"
		},
		parse: func(tok string, s *Step) error {
			inner, ok := strings.CutPrefix(tok, "[")
			if inner, ok = strings.CutSuffix(inner, "]"); !ok {
				return fmt.Errorf("fields %q: want [ref ...]", tok)
			}
			s.Fields = nil
			for _, f := range strings.Fields(inner) {
				r, err := parseRef(f)
				if err != nil {
					return err
				}
				s.Fields = append(s.Fields, r)
			}
			return nil
		},
		simpler: func(s Step) []Step {
			var out []Step
			for j := range s.Fields {
				c := s
				c.Fields = slices.Delete(slices.Clone(s.Fields), j, j+1)
				out = append(out, c)
				if s.Fields[j].Index != 0 {
					c := s
					c.Fields = slices.Clone(s.Fields)
					c.Fields[j].Index--
					out = append(out, c)
				}
			}
			return out
		}},
	OperandTarget: {name: "target",
		decode: func(d *decoder, s *Step) { s.Target = d.ref() },
		encode: func(out []byte, s Step, _ Shape) []byte { return append(out, refByte(s.Target)) },
		format: func(s Step) string { return s.Target.String() },
		parse: func(tok string, s *Step) (err error) {
			s.Target, err = parseRef(tok)
			return err
		},
		simpler: func(s Step) []Step {
			if s.Target.Index == 0 {
				return nil
			}
			s.Target.Index--
			return []Step{s}
		}},
	OperandName: {name: "name",
		decode:  func(d *decoder, s *Step) { s.Name = d.name(false) },
		encode:  func(out []byte, s Step, _ Shape) []byte { return append(out, anyNameByte(s.Name)) },
		format:  func(s Step) string { return s.Name },
		parse:   parseName,
		simpler: simplerName},
	OperandHeldName: {name: "held name",
		decode:  func(d *decoder, s *Step) { s.Name = d.name(true) },
		encode:  func(out []byte, s Step, sh Shape) []byte { return append(out, heldNameByte(s.Name, sh.names)) },
		format:  func(s Step) string { return s.Name },
		parse:   parseName,
		simpler: simplerName},
	OperandKind: {name: "kind",
		decode: func(d *decoder, s *Step) { s.Method = d.byte()%4 == 3 },
		encode: func(out []byte, s Step, _ Shape) []byte {
			if s.Method {
				return append(out, 3)
			}
			return append(out, 0)
		},
		format: func(s Step) string {
			if s.Method {
				return "method"
			}
			return "fn"
		},
		parse: func(tok string, s *Step) error {
			switch tok {
			case "fn", "method":
				s.Method = tok == "method"
				return nil
			}
			return fmt.Errorf("kind %q: want fn or method", tok)
		},
		simpler: func(s Step) []Step {
			if !s.Method {
				return nil
			}
			s.Method = false
			return []Step{s}
		}},
	OperandLives: {name: "lives",
		decode: func(d *decoder, s *Step) {
			s.Lives = nil
			for range int(d.byte() % (MaxVars + 1)) {
				s.Lives = append(s.Lives, lifeTable[d.byte()%4])
			}
		},
		encode: func(out []byte, s Step, _ Shape) []byte {
			out = append(out, byte(len(s.Lives)))
			for _, l := range s.Lives {
				out = append(out, lifeByte(l))
			}
			return out
		},
		format: func(s Step) string {
			ls := make([]string, len(s.Lives))
			for i, l := range s.Lives {
				ls[i] = strconv.Itoa(int(l))
			}
			return "[" + strings.Join(ls, " ") + "]"
		},
		parse: func(tok string, s *Step) error {
			inner, ok := strings.CutPrefix(tok, "[")
			if inner, ok = strings.CutSuffix(inner, "]"); !ok {
				return fmt.Errorf("lives %q: want [n ...]", tok)
			}
			s.Lives = nil
			for _, f := range strings.Fields(inner) {
				n, err := strconv.ParseUint(f, 10, 8)
				if err != nil || n >= lifeSpan {
					return fmt.Errorf("lives %q: %q is not a lifetime from 0 to %d", tok, f, lifeSpan-1)
				}
				s.Lives = append(s.Lives, uint8(n))
			}
			if len(s.Lives) > MaxVars {
				return fmt.Errorf("lives %q: at most %d variables", tok, MaxVars)
			}
			return nil
		},
		simpler: func(s Step) []Step {
			var out []Step
			for j := len(s.Lives) - 1; j >= 0; j-- {
				c := s
				c.Lives = slices.Delete(slices.Clone(s.Lives), j, j+1)
				out = append(out, c)
			}
			for j, l := range s.Lives {
				if l > 0 {
					c := s
					c.Lives = slices.Clone(s.Lives)
					c.Lives[j]--
					out = append(out, c)
				}
			}
			return out
		}},
	OperandVar: {name: "var",
		decode: func(d *decoder, s *Step) { s.Var = d.byte() % MaxVars },
		encode: func(out []byte, s Step, _ Shape) []byte { return append(out, s.Var) },
		format: func(s Step) string { return "var[" + strconv.Itoa(int(s.Var)) + "]" },
		parse: func(tok string, s *Step) error {
			inner, ok := strings.CutPrefix(tok, "var[")
			if inner, ok = strings.CutSuffix(inner, "]"); !ok {
				return fmt.Errorf("var %q: want var[i]", tok)
			}
			n, err := strconv.ParseUint(inner, 10, 8)
			if err != nil || n >= MaxVars {
				return fmt.Errorf("var %q: want an index from 0 to %d", tok, MaxVars-1)
			}
			s.Var = uint8(n)
			return nil
		},
		simpler: func(s Step) []Step {
			if s.Var == 0 {
				return nil
			}
			s.Var--
			return []Step{s}
		}},
}

func (o Operand) row() *operandRow { return &operandRows[o] }

// String names the operand kind: "size", "fields", "target", ...
func (o Operand) String() string {
	if int(o) < len(operandRows) {
		return operandRows[o].name
	}
	return "operand(" + strconv.Itoa(int(o)) + ")"
}

// Operands lists every operand kind, in the order of their constants.
func Operands() []Operand {
	out := make([]Operand, 0, len(operandRows)-1)
	for o := Operand(1); int(o) < len(operandRows); o++ {
		out = append(out, o)
	}
	return out
}

func parseName(tok string, s *Step) error {
	if !slices.Contains(names, tok) {
		return fmt.Errorf("name %q: programs use %s", tok, strings.Join(names, ", "))
	}
	s.Name = tok
	return nil
}

func simplerName(s Step) []Step {
	if s.Name == names[0] {
		return nil
	}
	s.Name = names[0]
	return []Step{s}
}

// parseRef reads a ref as Ref.String writes it: live[i], dead[i], null.
func parseRef(tok string) (Ref, error) {
	if tok == "null" {
		return Ref{Pick: Null}, nil
	}
	for _, p := range []struct {
		prefix string
		pick   Pick
	}{{"live[", Live}, {"dead[", Dead}} {
		if rest, ok := strings.CutPrefix(tok, p.prefix); ok {
			if num, ok := strings.CutSuffix(rest, "]"); ok {
				n, err := strconv.ParseUint(num, 10, 8)
				if err != nil {
					return Ref{}, fmt.Errorf("ref %q: %v", tok, err)
				}
				return Ref{Pick: p.pick, Index: uint8(n)}, nil
			}
		}
	}
	return Ref{}, fmt.Errorf("ref %q: want live[i], dead[i] or null", tok)
}
