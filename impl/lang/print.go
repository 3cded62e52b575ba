package lang

import (
	"fmt"
	"strings"
)

// String prints the program as source, in a Rust-like syntax a person can
// read and paste into a bug report.
func (p *Program) String() string {
	var b strings.Builder
	used := p.usedStructs()
	for i, s := range p.Structs {
		if !used[i] {
			continue // a generated program declares more than it uses
		}
		if len(s.Fields) == 0 {
			fmt.Fprintf(&b, "struct %s {}\n", s.Name)
			continue
		}
		fmt.Fprintf(&b, "struct %s { %s }\n", s.Name, strings.Join(fieldDecls(s.Fields), ", "))
	}
	for _, f := range p.Funcs {
		p.printFunc(&b, f)
	}
	return b.String()
}

func fieldDecls(fs []string) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f + ": Tensor"
	}
	return out
}

func (p *Program) typeName(t Type) string {
	if t.Tensor {
		return "Tensor"
	}
	if t.Struct >= 0 && t.Struct < len(p.Structs) {
		return p.Structs[t.Struct].Name
	}
	return fmt.Sprintf("<struct %d>", t.Struct)
}

func (p *Program) printFunc(b *strings.Builder, f *Func) {
	ps := make([]string, len(f.Params))
	for i, q := range f.Params {
		ps[i] = q.Name + ": &" + p.typeName(q.Type)
		if f.Method && i == 0 {
			ps[i] = "&self"
		}
	}
	kw := "fn"
	if f.Method && len(f.Params) > 0 {
		kw = "impl " + p.typeName(f.Params[0].Type) + " fn"
	}
	res := ""
	if f.Result != nil {
		res = " -> " + p.typeName(*f.Result)
	}
	fmt.Fprintf(b, "%s %s(%s)%s {\n", kw, f.Name, strings.Join(ps, ", "), res)
	p.printBody(b, f.Body, 1)
	b.WriteString("}\n")
}

func (p *Program) printBody(b *strings.Builder, body []Stmt, depth int) {
	for _, s := range body {
		p.printStmt(b, s, depth)
	}
}

func (p *Program) printStmt(b *strings.Builder, s Stmt, depth int) {
	ind := strings.Repeat("    ", depth)
	switch s := s.(type) {
	case *Let:
		fmt.Fprintf(b, "%slet %s = %s;\n", ind, s.Name, p.exprString(s.X, depth))
	case *Assign:
		fmt.Fprintf(b, "%s%s = %s;\n", ind, s.Name, p.exprString(s.X, depth))
	case *If:
		fmt.Fprintf(b, "%sif %s {\n", ind, s.Cond)
		p.printBody(b, s.Then, depth+1)
		if len(s.Else) > 0 {
			fmt.Fprintf(b, "%s} else {\n", ind)
			p.printBody(b, s.Else, depth+1)
		}
		fmt.Fprintf(b, "%s}\n", ind)
	case *Loop:
		fmt.Fprintf(b, "%sfor %s in 0..%d {\n", ind, s.Counter, s.N)
		p.printBody(b, s.Body, depth+1)
		fmt.Fprintf(b, "%s}\n", ind)
	case *Block:
		fmt.Fprintf(b, "%s{\n", ind)
		p.printBody(b, s.Body, depth+1)
		fmt.Fprintf(b, "%s}\n", ind)
	case *Break:
		fmt.Fprintf(b, "%sbreak;\n", ind)
	case *Continue:
		fmt.Fprintf(b, "%scontinue;\n", ind)
	case *Return:
		if s.Var == "" {
			fmt.Fprintf(b, "%sreturn;\n", ind)
		} else {
			fmt.Fprintf(b, "%sreturn %s;\n", ind, s.Var)
		}
	default:
		fmt.Fprintf(b, "%s<statement %T>\n", ind, s)
	}
}

func (c Cond) String() string {
	if c.Counter == "" {
		return fmt.Sprint(c.K != 0)
	}
	return fmt.Sprintf("%s == %d", c.Counter, c.K)
}

func (p *Program) exprString(x Expr, depth int) string {
	switch x := x.(type) {
	case *Var:
		return x.Name
	case *Op:
		if len(x.Args) == 0 {
			return fmt.Sprintf("zeros(%d)", x.Size)
		}
		return "add(" + strings.Join(x.Args, ", ") + ")"
	case *StructLit:
		name := p.typeName(Type{Struct: x.Type})
		if len(x.Fields) == 0 {
			return name + " {}"
		}
		var fs []string
		for i, f := range x.Fields {
			fname := fmt.Sprint(i)
			if x.Type < len(p.Structs) && i < len(p.Structs[x.Type].Fields) {
				fname = p.Structs[x.Type].Fields[i]
			}
			fs = append(fs, fname+": "+f)
		}
		return name + " { " + strings.Join(fs, ", ") + " }"
	case *Field:
		return x.Var + "." + p.fieldName(x)
	case *Call:
		if x.Func < 0 || x.Func >= len(p.Funcs) {
			return fmt.Sprintf("<func %d>()", x.Func)
		}
		f := p.Funcs[x.Func]
		args := make([]string, len(x.Args))
		for i, a := range x.Args {
			args[i] = "&" + a
		}
		if f.Method && len(x.Args) > 0 {
			return x.Args[0] + "." + f.Name + "(" + strings.Join(args[1:], ", ") + ")"
		}
		return f.Name + "(" + strings.Join(args, ", ") + ")"
	case *IfExpr:
		var b strings.Builder
		ind := strings.Repeat("    ", depth)
		fmt.Fprintf(&b, "if %s {\n", x.Cond)
		p.printBody(&b, x.Then, depth+1)
		fmt.Fprintf(&b, "%s    %s\n%s} else {\n", ind, x.ThenVal, ind)
		p.printBody(&b, x.Else, depth+1)
		fmt.Fprintf(&b, "%s    %s\n%s}", ind, x.ElseVal, ind)
		return b.String()
	case *BlockExpr:
		var b strings.Builder
		ind := strings.Repeat("    ", depth)
		b.WriteString("{\n")
		p.printBody(&b, x.Body, depth+1)
		fmt.Fprintf(&b, "%s    %s\n%s}", ind, x.Val, ind)
		return b.String()
	}
	return fmt.Sprintf("<expression %T>", x)
}

// fieldName names a field by its index, as StructDef names them (f0,
// f1, ...): the expression does not carry the struct's type.
func (p *Program) fieldName(x *Field) string {
	return fmt.Sprintf("f%d", x.Index)
}

// usedStructs says which struct types a parameter, a result or a literal
// names: every value of a struct type comes from one of them.
func (p *Program) usedStructs() map[int]bool {
	used := map[int]bool{}
	note := func(t Type) {
		if !t.Tensor {
			used[t.Struct] = true
		}
	}
	for _, f := range p.Funcs {
		for _, q := range f.Params {
			note(q.Type)
		}
		if f.Result != nil {
			note(*f.Result)
		}
		inspect(f.Body, nil, func(x Expr) {
			if l, ok := x.(*StructLit); ok {
				used[l.Type] = true
			}
		})
	}
	return used
}
