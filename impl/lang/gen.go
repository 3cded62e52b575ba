package lang

import "fmt"

// The generator: well-formed programs from a stream of choices. A choice
// is a number below n; where it comes from (bytes, rapid, a seeded
// generator) is the caller's, so a native fuzz target, rapid and gopter
// drive the same generator. Every program it makes passes Check.

// Chooser returns a number in [0, n), n >= 1.
type Chooser func(n int) int

// Bytes is a Chooser over data: each choice takes a byte, modulo n; past
// the end every choice is 0, which always picks the smallest program, so
// every input, however short, decodes to a program.
func Bytes(data []byte) Chooser {
	i := 0
	return func(n int) int {
		if i >= len(data) {
			return 0
		}
		b := int(data[i])
		i++
		return b % n
	}
}

// The struct types every generated program has: two with fields and an
// empty (zero-sized) one.
var genStructs = []StructDef{
	{Name: "Pair", Fields: []string{"f0", "f1"}},
	{Name: "Box", Fields: []string{"f0"}},
	{Name: "Empty"},
}

// genVar is a variable in scope during generation.
type genVar struct {
	name  string
	typ   Type
	param bool
}

type gen struct {
	c      Chooser
	p      *Program
	fi     int
	scopes [][]genVar
	loops  []string
	inExpr int
	names  int
	budget int // statements left to make in this function
}

// Generate makes a program from the choices of c.
func Generate(c Chooser) *Program {
	g := &gen{c: c, p: &Program{Structs: genStructs}}
	nf := 1 + c(4)
	g.p.Funcs = make([]*Func, nf)
	// Signatures first, so that a body may call any function after it.
	for i := range nf {
		f := &Func{Name: "main"}
		if i > 0 {
			f.Name = fmt.Sprintf("f%d", i)
			f.Method = c(3) == 0
			np := c(3)
			if f.Method && np == 0 {
				np = 1
			}
			for k := range np {
				t := g.typ()
				if k == 0 && f.Method {
					t = Type{Struct: c(len(genStructs))}
				}
				name := fmt.Sprintf("a%d", k)
				if k == 0 && f.Method {
					name = "self"
				}
				f.Params = append(f.Params, Param{name, t})
			}
			r := g.typ()
			f.Result = &r
		}
		g.p.Funcs[i] = f
	}
	for i := nf - 1; i >= 0; i-- {
		g.fn(i)
	}
	cheapen(g.p)
	return g.p
}

func (g *gen) typ() Type {
	if k := g.c(4); k < 3 {
		if k == 0 {
			return Type{Struct: g.c(len(genStructs))}
		}
		return Type{Tensor: true}
	}
	return Type{Struct: 2}
}

func (g *gen) fn(i int) {
	f := g.p.Funcs[i]
	g.fi, g.names, g.budget = i, 0, 4+g.c(10)
	g.scopes = [][]genVar{nil}
	g.loops = nil
	for _, q := range f.Params {
		g.scopes[0] = append(g.scopes[0], genVar{q.Name, q.Type, true})
	}
	body := g.stmts(0)
	if f.Result != nil {
		body = append(body, g.ensure(*f.Result)...)
		body = append(body, &Return{g.pick(*f.Result, false)})
	}
	f.Body = body
}

// stmts makes a block's statements at nesting depth.
func (g *gen) stmts(depth int) []Stmt {
	var out []Stmt
	n := g.c(5)
	for range n {
		if g.budget <= 0 {
			break
		}
		g.budget--
		out = append(out, g.stmt(depth)...)
		if _, jump := out[len(out)-1].(*Break); jump {
			break
		}
		if _, jump := out[len(out)-1].(*Continue); jump {
			break
		}
		if _, jump := out[len(out)-1].(*Return); jump {
			break
		}
	}
	return out
}

func (g *gen) declare(name string, t Type) {
	g.scopes[len(g.scopes)-1] = append(g.scopes[len(g.scopes)-1], genVar{name: name, typ: t})
}

// visible lists the variables in scope (the newest binding of each name)
// of type t, or of any type with any set.
func (g *gen) visible(t Type, any, locals bool) []genVar {
	seen := map[string]bool{}
	var out []genVar
	for i := len(g.scopes) - 1; i >= 0; i-- {
		for j := len(g.scopes[i]) - 1; j >= 0; j-- {
			v := g.scopes[i][j]
			if seen[v.name] {
				continue
			}
			seen[v.name] = true
			if (any || v.typ == t) && !(locals && v.param) {
				out = append(out, v)
			}
		}
	}
	return out
}

// pick names a variable of type t in scope, or "" if there is none.
func (g *gen) pick(t Type, locals bool) string {
	vs := g.visible(t, false, locals)
	if len(vs) == 0 {
		return ""
	}
	return vs[g.c(len(vs))].name
}

// newName is a fresh name, or now and then one in scope, which the let
// then shadows.
func (g *gen) newName() string {
	if vs := g.visible(Type{}, true, true); len(vs) > 0 && g.c(5) == 0 {
		return vs[g.c(len(vs))].name
	}
	g.names++
	return fmt.Sprintf("v%d", g.names)
}

// ensure returns lets that make a variable of type t exist, if none does.
func (g *gen) ensure(t Type) []Stmt {
	if g.pick(t, false) != "" {
		return nil
	}
	var out []Stmt
	if t.Tensor {
		name := g.newFresh()
		out = append(out, &Let{name, &Op{Size: g.size()}})
		g.declare(name, t)
		return out
	}
	var fields []string
	for range genStructs[t.Struct].Fields {
		out = append(out, g.ensure(Type{Tensor: true})...)
		fields = append(fields, g.pick(Type{Tensor: true}, false))
	}
	name := g.newFresh()
	out = append(out, &Let{name, &StructLit{Type: t.Struct, Fields: fields}})
	g.declare(name, t)
	return out
}

func (g *gen) newFresh() string {
	g.names++
	return fmt.Sprintf("v%d", g.names)
}

func (g *gen) size() uint64 { return 16 << g.c(3) }

func (g *gen) cond() Cond {
	if len(g.loops) > 0 && g.c(3) > 0 {
		return Cond{Counter: g.loops[g.c(len(g.loops))], K: g.c(MaxLoop)}
	}
	return Cond{K: g.c(2)}
}

func (g *gen) block(depth int) []Stmt {
	g.scopes = append(g.scopes, nil)
	defer func() { g.scopes = g.scopes[:len(g.scopes)-1] }()
	return g.stmts(depth + 1)
}

// stmt makes one statement (with the lets it needs before it).
func (g *gen) stmt(depth int) []Stmt {
	k := g.c(16)
	if len(g.loops) > 0 && g.inExpr == 0 && g.c(4) == 0 {
		k = 13 // in a loop, leave it now and then: break and continue need exercise
	}
	if depth >= 3 && k >= 7 && k <= 12 {
		k = 0
	}
	switch {
	case k <= 4: // let
		var pre []Stmt
		x, t := g.expr(&pre, depth)
		name := g.newName()
		g.declare(name, t)
		return append(pre, &Let{name, x})
	case k <= 6: // assign
		vs := g.visible(Type{}, true, true)
		if len(vs) == 0 {
			return g.stmt(depth)
		}
		v := vs[g.c(len(vs))]
		var pre []Stmt
		var x Expr
		if v.typ.Tensor && g.c(2) == 0 {
			x = &Op{Size: g.size()}
		} else {
			pre = g.ensure(v.typ)
			x = &Var{g.pick(v.typ, false)}
		}
		return append(pre, &Assign{v.name, x})
	case k == 7 || k == 8:
		c := g.cond()
		return []Stmt{&If{Cond: c, Then: g.block(depth), Else: g.maybeBlock(depth)}}
	case k == 9:
		if len(g.loops) >= 2 || g.inExpr > 0 {
			return []Stmt{&Block{Body: g.block(depth)}}
		}
		counter := fmt.Sprintf("i%d", len(g.loops))
		n := 1 + g.c(MaxLoop)
		g.loops = append(g.loops, counter)
		body := g.block(depth)
		g.loops = g.loops[:len(g.loops)-1]
		return []Stmt{&Loop{Counter: counter, N: n, Body: body}}
	case k == 10:
		return []Stmt{&Block{Body: g.block(depth)}}
	case k == 11 || k == 12: // let x = if / block expression
		var pre []Stmt
		name := g.newName()
		x, t := g.valueExpr(depth)
		g.declare(name, t)
		return append(pre, &Let{name, x})
	case k == 13: // break or continue
		if len(g.loops) > 0 && g.inExpr == 0 {
			if g.c(2) == 0 {
				return []Stmt{&Break{}}
			}
			return []Stmt{&Continue{}}
		}
		return g.stmt(depth)
	default: // early return, half as often: it ends the block
		if g.inExpr > 0 || g.c(2) == 0 {
			return g.stmt(depth)
		}
		f := g.p.Funcs[g.fi]
		if f.Result == nil {
			return []Stmt{&Return{}}
		}
		pre := g.ensure(*f.Result)
		return append(pre, &Return{g.pick(*f.Result, false)})
	}
}

func (g *gen) maybeBlock(depth int) []Stmt {
	if g.c(2) == 0 {
		return nil
	}
	return g.block(depth)
}

// valueExpr makes an if or block expression: statements in a block of
// their own, then a variable in scope there whose value escapes.
func (g *gen) valueExpr(depth int) (Expr, Type) {
	g.inExpr++
	defer func() { g.inExpr-- }()
	c := g.cond()
	g.scopes = append(g.scopes, nil)
	then := g.stmts(depth + 1)
	var t Type
	vs := g.visible(Type{}, true, false)
	if len(vs) == 0 {
		t = Type{Tensor: true}
	} else {
		t = vs[g.c(len(vs))].typ
	}
	then = append(then, g.ensure(t)...)
	thenVal := g.pick(t, false)
	g.scopes = g.scopes[:len(g.scopes)-1]
	if g.c(3) == 0 {
		return &BlockExpr{Body: then, Val: thenVal}, t
	}
	g.scopes = append(g.scopes, nil)
	els := g.stmts(depth + 1)
	els = append(els, g.ensure(t)...)
	elseVal := g.pick(t, false)
	g.scopes = g.scopes[:len(g.scopes)-1]
	return &IfExpr{Cond: c, Then: then, ThenVal: thenVal, Else: els, ElseVal: elseVal}, t
}

// expr makes the value of a let, with any lets it needs put in pre.
func (g *gen) expr(pre *[]Stmt, depth int) (Expr, Type) {
	switch g.c(7) {
	case 0:
		return &Op{Size: g.size()}, Type{Tensor: true}
	case 1:
		var args []string
		for range 1 + g.c(2) {
			*pre = append(*pre, g.ensure(Type{Tensor: true})...)
			args = append(args, g.pick(Type{Tensor: true}, false))
		}
		return &Op{Args: args}, Type{Tensor: true}
	case 2:
		s := g.c(len(genStructs))
		var fields []string
		for range genStructs[s].Fields {
			*pre = append(*pre, g.ensure(Type{Tensor: true})...)
			fields = append(fields, g.pick(Type{Tensor: true}, false))
		}
		return &StructLit{Type: s, Fields: fields}, Type{Struct: s}
	case 3:
		vs := g.visible(Type{}, true, false)
		if len(vs) == 0 {
			return &Op{Size: g.size()}, Type{Tensor: true}
		}
		v := vs[g.c(len(vs))]
		return &Var{v.name}, v.typ
	case 4:
		var vs []genVar
		for _, v := range g.visible(Type{}, true, false) {
			if !v.typ.Tensor && len(genStructs[v.typ.Struct].Fields) > 0 {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			return &Op{Size: g.size()}, Type{Tensor: true}
		}
		v := vs[g.c(len(vs))]
		return &Field{Var: v.name, Index: g.c(len(genStructs[v.typ.Struct].Fields))}, Type{Tensor: true}
	default:
		if g.fi+1 >= len(g.p.Funcs) {
			return &Op{Size: g.size()}, Type{Tensor: true}
		}
		fi := g.fi + 1 + g.c(len(g.p.Funcs)-g.fi-1)
		f := g.p.Funcs[fi]
		var args []string
		for _, q := range f.Params {
			*pre = append(*pre, g.ensure(q.Type)...)
			args = append(args, g.pick(q.Type, false))
		}
		return &Call{Func: fi, Args: args}, *f.Result
	}
}
