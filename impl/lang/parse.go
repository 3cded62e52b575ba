package lang

import (
	"fmt"
	"strconv"
	"strings"
)

// The parser: source text, as String prints it, back to a Program, so that
// a counterexample saved as a .tl file can be lowered and checked again
// after the code it found a bug in has changed (its old trace cannot show
// a fix). The grammar is the printer's:
//
//	program = { struct | func }
//	struct  = "struct" NAME "{" [ NAME ":" "Tensor" { "," NAME ":" "Tensor" } ] "}"
//	func    = [ "impl" TYPE ] "fn" NAME "(" [ param { "," param } ] ")" [ "->" TYPE ] "{" { stmt } "}"
//	param   = "&self" | NAME ":" "&" TYPE         (&self only first, and only in an impl)
//	stmt    = "let" NAME "=" expr ";" | NAME "=" expr ";"
//	        | "if" cond "{" { stmt } "}" [ "else" "{" { stmt } "}" ]
//	        | "for" NAME "in" "0" ".." INT "{" { stmt } "}" | "{" { stmt } "}"
//	        | "break" ";" | "continue" ";" | "return" [ NAME ] ";"
//	cond    = "true" | "false" | NAME "==" INT
//	expr    = "zeros" "(" INT ")" | "add" "(" NAME { "," NAME } ")"
//	        | TYPE "{" [ NAME ":" NAME { "," NAME ":" NAME } ] "}"
//	        | NAME "." "f" INT                     (a field, by index)
//	        | NAME "." NAME "(" args ")" | NAME "(" args ")"   (args: "&" NAME, comma separated)
//	        | "if" cond "{" { stmt } NAME "}" "else" "{" { stmt } NAME "}"
//	        | "{" { stmt } NAME "}" | NAME
//
// A // comment runs to the end of its line. Struct types and functions are
// numbered in the order they are declared; the first function is main. A
// call may name a function declared later in the file.

// Parse reads a program from src. A syntax error, or a name that is no
// struct type, function or field, is an error naming its line and column.
// Parse checks the syntax and the names of types and functions only:
// Check (which Interpret and Lower run first) judges the rest.
func Parse(src string) (*Program, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	ps := &parser{toks: toks, p: &Program{}, structs: map[string]int{}, funcs: map[string]int{}}
	if err := ps.program(); err != nil {
		return nil, err
	}
	return ps.p, nil
}

// token is a word, a number or a punctuation mark, and where it starts.
type token struct {
	text      string
	line, col int
}

func (t token) String() string {
	if t.text == "" {
		return "the end of the file"
	}
	return strconv.Quote(t.text)
}

// posError is a parse error at a token.
func posError(t token, format string, args ...any) error {
	return fmt.Errorf("lang: line %d, column %d: %s", t.line, t.col, fmt.Sprintf(format, args...))
}

// punct are the marks, longest first where one begins another.
var punct = []string{"->", "..", "==", "{", "}", "(", ")", ",", ";", ":", "&", ".", "="}

func lex(src string) ([]token, error) {
	var out []token
	line, col := 1, 1
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line, col = line+1, 1
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			col++
			continue
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		}
		j := i
		switch {
		case isWord(c):
			for j < len(src) && isWord(src[j]) {
				j++
			}
		default:
			for _, p := range punct {
				if strings.HasPrefix(src[i:], p) {
					j = i + len(p)
					break
				}
			}
			if j == i {
				return nil, posError(token{line: line, col: col}, "unexpected character %q", rune(c))
			}
		}
		out = append(out, token{src[i:j], line, col})
		col += j - i
		i = j
	}
	return append(out, token{line: line, col: col}), nil // the end
}

func isWord(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isName(s string) bool {
	return s != "" && isWord(s[0]) && !('0' <= s[0] && s[0] <= '9')
}

// call is a call whose function is named before every function is
// declared: resolved at the end.
type call struct {
	c    *Call
	name string
	at   token
}

type parser struct {
	toks    []token
	i       int
	p       *Program
	structs map[string]int
	funcs   map[string]int
	calls   []call
}

func (ps *parser) peek() token { return ps.toks[ps.i] }

func (ps *parser) peekAt(k int) token {
	if ps.i+k < len(ps.toks) {
		return ps.toks[ps.i+k]
	}
	return ps.toks[len(ps.toks)-1]
}

func (ps *parser) next() token {
	t := ps.toks[ps.i]
	if ps.i < len(ps.toks)-1 {
		ps.i++
	}
	return t
}

// accept takes the next token if it is text.
func (ps *parser) accept(text string) bool {
	if ps.peek().text == text {
		ps.next()
		return true
	}
	return false
}

func (ps *parser) expect(text string) error {
	if t := ps.next(); t.text != text {
		return posError(t, "want %q, found %v", text, t)
	}
	return nil
}

func (ps *parser) name() (string, error) {
	t := ps.next()
	if !isName(t.text) {
		return "", posError(t, "want a name, found %v", t)
	}
	return t.text, nil
}

func (ps *parser) int() (int, error) {
	t := ps.next()
	n, err := strconv.Atoi(t.text)
	if err != nil || n < 0 {
		return 0, posError(t, "want a non-negative integer, found %v", t)
	}
	return n, nil
}

func (ps *parser) program() error {
	for ps.peek().text != "" {
		var err error
		switch ps.peek().text {
		case "struct":
			err = ps.structDef()
		case "impl", "fn":
			err = ps.fn()
		default:
			err = posError(ps.peek(), "want struct, fn or impl, found %v", ps.peek())
		}
		if err != nil {
			return err
		}
	}
	if len(ps.p.Funcs) == 0 {
		return posError(ps.peek(), "no function: a program needs main")
	}
	for _, c := range ps.calls {
		fi, ok := ps.funcs[c.name]
		if !ok {
			return posError(c.at, "no function %s", c.name)
		}
		c.c.Func = fi
	}
	return nil
}

func (ps *parser) structDef() error {
	ps.next()
	at := ps.peek()
	name, err := ps.name()
	if err != nil {
		return err
	}
	if _, dup := ps.structs[name]; dup || name == "Tensor" {
		return posError(at, "struct %s is declared twice", name)
	}
	if err := ps.expect("{"); err != nil {
		return err
	}
	s := StructDef{Name: name}
	for !ps.accept("}") {
		if len(s.Fields) > 0 {
			if err := ps.expect(","); err != nil {
				return err
			}
		}
		f, err := ps.name()
		if err != nil {
			return err
		}
		if err := ps.expect(":"); err != nil {
			return err
		}
		if err := ps.expect("Tensor"); err != nil {
			return err
		}
		s.Fields = append(s.Fields, f)
	}
	ps.structs[name] = len(ps.p.Structs)
	ps.p.Structs = append(ps.p.Structs, s)
	return nil
}

func (ps *parser) typ() (Type, error) {
	t := ps.next()
	if t.text == "Tensor" {
		return Type{Tensor: true}, nil
	}
	k, ok := ps.structs[t.text]
	if !ok {
		return Type{}, posError(t, "no type %v (a struct is declared before it is named)", t)
	}
	return Type{Struct: k}, nil
}

func (ps *parser) fn() error {
	f := &Func{}
	var self Type
	if ps.accept("impl") {
		t, err := ps.typ()
		if err != nil {
			return err
		}
		f.Method, self = true, t
	}
	if err := ps.expect("fn"); err != nil {
		return err
	}
	at := ps.peek()
	name, err := ps.name()
	if err != nil {
		return err
	}
	if _, dup := ps.funcs[name]; dup || isOp(name) {
		return posError(at, "fn %s is declared twice, or is an operation's name", name)
	}
	f.Name = name
	if err := ps.expect("("); err != nil {
		return err
	}
	for !ps.accept(")") {
		if len(f.Params) > 0 {
			if err := ps.expect(","); err != nil {
				return err
			}
		}
		if ps.peek().text == "&" && ps.peekAt(1).text == "self" {
			if !f.Method || len(f.Params) > 0 {
				return posError(ps.peek(), "&self is a method's first parameter (impl TYPE fn)")
			}
			ps.next()
			ps.next()
			f.Params = append(f.Params, Param{"self", self})
			continue
		}
		q, err := ps.name()
		if err != nil {
			return err
		}
		if err := ps.expect(":"); err != nil {
			return err
		}
		if err := ps.expect("&"); err != nil {
			return err
		}
		t, err := ps.typ()
		if err != nil {
			return err
		}
		f.Params = append(f.Params, Param{q, t})
	}
	if f.Method && len(f.Params) == 0 {
		return posError(at, "method %s has no &self", name)
	}
	if ps.accept("->") {
		t, err := ps.typ()
		if err != nil {
			return err
		}
		f.Result = &t
	}
	ps.funcs[name] = len(ps.p.Funcs)
	ps.p.Funcs = append(ps.p.Funcs, f)
	f.Body, _, err = ps.body(false)
	return err
}

// body parses "{" statements "}"; with value set, the block ends with the
// name of its value before the "}", which it returns too.
func (ps *parser) body(value bool) ([]Stmt, string, error) {
	if err := ps.expect("{"); err != nil {
		return nil, "", err
	}
	var out []Stmt
	for {
		t := ps.peek()
		if value && isName(t.text) && ps.peekAt(1).text == "}" {
			ps.next()
			ps.next()
			return out, t.text, nil
		}
		if ps.accept("}") {
			if value {
				return nil, "", posError(t, "want the name of the block's value before %q", "}")
			}
			return out, "", nil
		}
		s, err := ps.stmt()
		if err != nil {
			return nil, "", err
		}
		out = append(out, s)
	}
}

func (ps *parser) stmt() (Stmt, error) {
	t := ps.peek()
	switch t.text {
	case "let":
		ps.next()
		name, err := ps.name()
		if err != nil {
			return nil, err
		}
		if err := ps.expect("="); err != nil {
			return nil, err
		}
		x, err := ps.expr()
		if err != nil {
			return nil, err
		}
		return &Let{name, x}, ps.expect(";")
	case "if":
		ps.next()
		c, err := ps.cond()
		if err != nil {
			return nil, err
		}
		s := &If{Cond: c}
		if s.Then, _, err = ps.body(false); err != nil {
			return nil, err
		}
		if ps.accept("else") {
			if s.Else, _, err = ps.body(false); err != nil {
				return nil, err
			}
		}
		return s, nil
	case "for":
		ps.next()
		counter, err := ps.name()
		if err != nil {
			return nil, err
		}
		if err := ps.expect("in"); err != nil {
			return nil, err
		}
		if err := ps.expect("0"); err != nil {
			return nil, err
		}
		if err := ps.expect(".."); err != nil {
			return nil, err
		}
		n, err := ps.int()
		if err != nil {
			return nil, err
		}
		body, _, err := ps.body(false)
		return &Loop{Counter: counter, N: n, Body: body}, err
	case "{":
		body, _, err := ps.body(false)
		return &Block{Body: body}, err
	case "break":
		ps.next()
		return &Break{}, ps.expect(";")
	case "continue":
		ps.next()
		return &Continue{}, ps.expect(";")
	case "return":
		ps.next()
		s := &Return{}
		if !ps.accept(";") {
			var err error
			if s.Var, err = ps.name(); err != nil {
				return nil, err
			}
			return s, ps.expect(";")
		}
		return s, nil
	}
	if isName(t.text) && ps.peekAt(1).text == "=" {
		ps.next()
		ps.next()
		x, err := ps.expr()
		if err != nil {
			return nil, err
		}
		return &Assign{t.text, x}, ps.expect(";")
	}
	return nil, posError(t, "want a statement, found %v", t)
}

func (ps *parser) cond() (Cond, error) {
	switch t := ps.peek(); t.text {
	case "true":
		ps.next()
		return Cond{K: 1}, nil
	case "false":
		ps.next()
		return Cond{}, nil
	}
	counter, err := ps.name()
	if err != nil {
		return Cond{}, err
	}
	if err := ps.expect("=="); err != nil {
		return Cond{}, err
	}
	k, err := ps.int()
	return Cond{Counter: counter, K: k}, err
}

func (ps *parser) expr() (Expr, error) {
	t := ps.peek()
	switch {
	case t.text == "if":
		ps.next()
		c, err := ps.cond()
		if err != nil {
			return nil, err
		}
		x := &IfExpr{Cond: c}
		if x.Then, x.ThenVal, err = ps.body(true); err != nil {
			return nil, err
		}
		if err := ps.expect("else"); err != nil {
			return nil, err
		}
		x.Else, x.ElseVal, err = ps.body(true)
		return x, err
	case t.text == "{":
		body, val, err := ps.body(true)
		return &BlockExpr{Body: body, Val: val}, err
	case !isName(t.text):
		return nil, posError(t, "want an expression, found %v", t)
	}
	ps.next()
	switch after := ps.peek().text; {
	case after == "{": // a struct literal
		return ps.structLit(t)
	case after == "(" && isOp(t.text):
		return ps.op(t)
	case after == "(":
		args, err := ps.args(nil)
		if err != nil {
			return nil, err
		}
		x := &Call{Func: -1, Args: args}
		ps.calls = append(ps.calls, call{x, t.text, t})
		return x, nil
	case after == ".":
		ps.next()
		m := ps.next()
		if !isName(m.text) {
			return nil, posError(m, "want a field or a method after %q, found %v", ".", m)
		}
		if ps.peek().text == "(" {
			args, err := ps.args([]string{t.text})
			if err != nil {
				return nil, err
			}
			x := &Call{Func: -1, Args: args}
			ps.calls = append(ps.calls, call{x, m.text, m})
			return x, nil
		}
		k, err := strconv.Atoi(strings.TrimPrefix(m.text, "f"))
		if !strings.HasPrefix(m.text, "f") || err != nil || k < 0 {
			return nil, posError(m, "a field is named by its index, f0, f1, ...: found %v", m)
		}
		return &Field{Var: t.text, Index: k}, nil
	}
	return &Var{t.text}, nil
}

// isOp says whether name is a tensor operation's: the language's own,
// which no function may take.
func isOp(name string) bool { return name == "zeros" || name == "add" }

func (ps *parser) op(t token) (Expr, error) {
	ps.next() // (
	if t.text == "zeros" {
		at := ps.peek()
		n, err := ps.int()
		if err != nil {
			return nil, err
		}
		if uint64(n) > MaxTensor {
			return nil, posError(at, "%v", tooBig(uint64(n)))
		}
		return &Op{Size: uint64(n)}, ps.expect(")")
	}
	x := &Op{}
	for {
		a, err := ps.name()
		if err != nil {
			return nil, err
		}
		x.Args = append(x.Args, a)
		if ps.accept(")") {
			return x, nil
		}
		if err := ps.expect(","); err != nil {
			return nil, err
		}
	}
}

// args parses "(" "&" NAME { "," "&" NAME } ")" after the leading ones.
func (ps *parser) args(args []string) ([]string, error) {
	ps.next() // (
	for n := 0; !ps.accept(")"); n++ {
		if n > 0 {
			if err := ps.expect(","); err != nil {
				return nil, err
			}
		}
		if err := ps.expect("&"); err != nil {
			return nil, err
		}
		a, err := ps.name()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	return args, nil
}

func (ps *parser) structLit(t token) (Expr, error) {
	k, ok := ps.structs[t.text]
	if !ok {
		return nil, posError(t, "no struct %s", t.text)
	}
	ps.next() // {
	def := ps.p.Structs[k]
	x := &StructLit{Type: k, Fields: make([]string, len(def.Fields))}
	set := 0
	for n := 0; !ps.accept("}"); n++ {
		if n > 0 {
			if err := ps.expect(","); err != nil {
				return nil, err
			}
		}
		ft := ps.peek()
		f, err := ps.name()
		if err != nil {
			return nil, err
		}
		i := indexOf(def.Fields, f)
		if i < 0 || x.Fields[i] != "" {
			return nil, posError(ft, "struct %s has no field %s, or it is given twice", def.Name, f)
		}
		if err := ps.expect(":"); err != nil {
			return nil, err
		}
		if x.Fields[i], err = ps.name(); err != nil {
			return nil, err
		}
		set++
	}
	if set != len(def.Fields) {
		return nil, posError(t, "struct %s has %d fields: %d given", def.Name, len(def.Fields), set)
	}
	return x, nil
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return -1
}
