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
	turns  []int // how many times each open loop runs
	// bodies holds, for each open loop, the index in scopes of its
	// body's scope: the variables of the scopes below it are declared
	// outside the loop.
	bodies []int
	inExpr int
	names  int
	budget int // statements left to make in this function
	// loopy is the style of a quarter of the programs: loops are
	// frequent, their bodies read variables from outside them and seldom
	// leave early, and a loop is often followed by another that reads
	// the same variable. A uniform choice among statements makes these
	// shapes rare, and they are where liveness goes wrong: the loop
	// liveness bug of issue 17 escaped a million programs for want of
	// them.
	loopy bool
}

// Generate makes a program from the choices of c.
func Generate(c Chooser) *Program {
	g := &gen{c: c, p: &Program{Structs: genStructs}}
	g.loopy = c(4) == 3 // not 0: past the end of a fuzzer's bytes, the smallest programs
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
	g.loops, g.turns, g.bodies = nil, nil, nil
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

// operand names a variable of type t in scope to read, as pick does; in a
// loop, half the time one declared outside the innermost loop, if one is
// visible. Reads of outer variables from loop bodies are what keep a
// variable live across a loop's turns (see analyze.go), and a uniform
// pick among the many variables in scope makes them rare: the loop
// liveness bug of issue 17 escaped a million programs for want of them.
func (g *gen) operand(t Type) string {
	if len(g.bodies) > 0 && g.c(2) == 0 {
		if vs := g.outside(t, false, g.bodies[len(g.bodies)-1]); len(vs) > 0 {
			return vs[g.c(len(vs))].name
		}
	}
	return g.pick(t, false)
}

// outside lists the visible variables of type t (with structs set, of any
// struct type with fields) declared in scopes[:limit] and not shadowed by
// a later declaration of their name.
func (g *gen) outside(t Type, structs bool, limit int) []genVar {
	seen := map[string]bool{}
	var out []genVar
	for i := len(g.scopes) - 1; i >= 0; i-- {
		for j := len(g.scopes[i]) - 1; j >= 0; j-- {
			v := g.scopes[i][j]
			if seen[v.name] {
				continue
			}
			seen[v.name] = true
			if i >= limit {
				continue
			}
			if !structs && v.typ == t || structs && !v.typ.Tensor && len(genStructs[v.typ.Struct].Fields) > 0 {
				out = append(out, v)
			}
		}
	}
	return out
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
		fields = append(fields, g.operand(Type{Tensor: true}))
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
		// A turn the loop takes: a condition no turn meets hides what
		// it guards.
		j := g.c(len(g.loops))
		return Cond{Counter: g.loops[j], K: g.c(g.turns[j])}
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
	if g.loopy && len(g.loops) < 2 && g.inExpr == 0 && g.c(3) == 2 {
		k = 9
	}
	if len(g.loops) > 0 && g.inExpr == 0 && g.c(4) == 0 && (!g.loopy || g.c(2) == 0) {
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
			x = &Var{g.operand(v.typ)}
		}
		return append(pre, &Assign{v.name, x})
	case k == 7 || k == 8:
		c := g.cond()
		return []Stmt{&If{Cond: c, Then: g.block(depth), Else: g.maybeBlock(depth)}}
	case k == 9:
		if len(g.loops) >= 2 || g.inExpr > 0 {
			return []Stmt{&Block{Body: g.block(depth)}}
		}
		// A loopy program's loop gets a tensor to read from outside, if
		// none is in scope yet.
		var out []Stmt
		if g.loopy {
			out = g.ensure(Type{Tensor: true})
		}
		first, read := g.loop(depth, "")
		out = append(out, first)
		// Now and then (in a loopy program, half the time) a second loop
		// follows the first, as a training loop's evaluation loop
		// follows it, and half of those read what the first read: a
		// variable read in both must live to the second one's end.
		if g.budget > 0 && (g.loopy && g.c(2) == 1 || g.c(4) == 3) {
			g.budget--
			if g.c(4) < 2 || g.loopy && g.c(2) == 0 {
				read = "" // a loopy program's second loop shares it 3 times in 4
			}
			second, _ := g.loop(depth, read)
			out = append(out, second)
		}
		return out
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
		return append(pre, &Return{g.operand(*f.Result)})
	}
}

// loop makes a loop at depth. Its body starts, when read names a tensor
// or else a quarter of the time (in a loopy program, always), by reading
// a tensor declared outside the loop (read, or one picked) into a new
// one, so that the statements after it define variables while the outer
// one must stay live for the next turn; loop returns the loop and the
// tensor its body read first ("" if none).
func (g *gen) loop(depth int, read string) (*Loop, string) {
	counter := fmt.Sprintf("i%d", len(g.loops))
	n := 1 + g.c(MaxLoop)
	if g.loopy && n == 1 {
		n = 2 // a loopy program's loops turn more than once
	}
	g.loops = append(g.loops, counter)
	g.turns = append(g.turns, n)
	g.bodies = append(g.bodies, len(g.scopes))
	g.scopes = append(g.scopes, nil)
	var body []Stmt
	if read == "" && (g.loopy || g.c(4) == 3) {
		if vs := g.outside(Type{Tensor: true}, false, len(g.scopes)-1); len(vs) > 0 {
			read = vs[g.c(len(vs))].name
		}
	}
	if read != "" {
		name := g.newFresh()
		body = append(body, &Let{name, &Op{Args: []string{read}}})
		g.declare(name, Type{Tensor: true})
	}
	// A loopy program's loop body may make statements even when the
	// function's budget is spent: a second loop's body must have
	// something to do after its read.
	if g.loopy {
		g.budget = max(g.budget, 2)
	}
	body = append(body, g.stmts(depth+1)...)
	g.scopes = g.scopes[:len(g.scopes)-1]
	g.loops = g.loops[:len(g.loops)-1]
	g.turns = g.turns[:len(g.turns)-1]
	g.bodies = g.bodies[:len(g.bodies)-1]
	return &Loop{Counter: counter, N: n, Body: body}, read
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
			args = append(args, g.operand(Type{Tensor: true}))
		}
		return &Op{Args: args}, Type{Tensor: true}
	case 2:
		s := g.c(len(genStructs))
		var fields []string
		for range genStructs[s].Fields {
			*pre = append(*pre, g.ensure(Type{Tensor: true})...)
			fields = append(fields, g.operand(Type{Tensor: true}))
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
		if len(g.bodies) > 0 && g.c(2) == 0 { // as operand does
			vs = g.outside(Type{}, true, g.bodies[len(g.bodies)-1])
		}
		if len(vs) == 0 {
			for _, v := range g.visible(Type{}, true, false) {
				if !v.typ.Tensor && len(genStructs[v.typ.Struct].Fields) > 0 {
					vs = append(vs, v)
				}
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
			args = append(args, g.operand(q.Type))
		}
		return &Call{Func: fi, Args: args}, *f.Result
	}
}
