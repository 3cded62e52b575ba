package lang

import (
	"fmt"
	"slices"
)

// The interpreter: the language's meaning, with objects kept by identity.
// A value is alive while a variable in scope (in any frame of the call
// stack) holds it, directly or through struct fields; a variable moved
// from at its last use holds nothing. Objects are numbered in the order
// they are made (tensor operations and non-empty struct literals), which
// is also the order the lowered program allocates them, so the two can be
// compared object by object.

// Alive is, after one statement, the objects alive: their numbers,
// ascending.
type Alive []int

// object is a value the interpreter made; nil is NULL (an empty struct).
// A struct a function returns is copied into its caller's destination: a
// value with the same fields and no identity of its own (id -1), as it
// lives in the caller's frame, not on the heap.
type object struct {
	id     int
	size   uint64
	fields []*object
}

type ivar struct {
	name  string
	decl  *Let
	val   *object
	moved bool
}

type iframe struct {
	fn     *Func
	facts  facts
	scopes [][]*ivar
	counts map[string]int
}

type interp struct {
	p      *Program
	frames []*iframe
	next   int
	out    []Alive
	known  map[*Func]facts
}

// ctrl is how a statement ends: normally, or leaving by break, continue
// or return.
type ctrl int

const (
	ctrlNext ctrl = iota
	ctrlBreak
	ctrlContinue
	ctrlReturn
)

// Interpret runs p and returns what is alive after each statement, in
// the order the statements ran. A program that is not well formed (an
// unknown variable, function or field) is an error naming the place.
func Interpret(p *Program) (out []Alive, err error) {
	if err := Check(p); err != nil {
		return nil, err
	}
	in := &interp{p: p, known: map[*Func]facts{}}
	in.call(0, nil)
	return in.out, nil
}

func (in *interp) top() *iframe { return in.frames[len(in.frames)-1] }

func (in *interp) call(fi int, args []*object) *object {
	fn := in.p.Funcs[fi]
	f, ok := in.known[fn]
	if !ok {
		f = analyze(in.p, fn, false) // the lifetimes are the lowering's: the interpreter reads the moves
		in.known[fn] = f
	}
	fr := &iframe{fn: fn, facts: f, counts: map[string]int{}}
	in.frames = append(in.frames, fr)
	fr.scopes = append(fr.scopes, nil)
	for i, p := range fn.Params {
		fr.scopes[0] = append(fr.scopes[0], &ivar{name: p.Name, val: args[i]})
	}
	_, ret := in.body(fn.Body)
	in.frames = in.frames[:len(in.frames)-1]
	if ret != nil && len(ret.fields) > 0 {
		ret = &object{id: -1, size: ret.size, fields: ret.fields}
	}
	return ret
}

func (in *interp) lookup(name string) *ivar {
	fr := in.top()
	for i := len(fr.scopes) - 1; i >= 0; i-- {
		s := fr.scopes[i]
		for j := len(s) - 1; j >= 0; j-- {
			if s[j].name == name {
				return s[j]
			}
		}
	}
	panic(fmt.Sprintf("lang: variable %s is not in scope (Check should have refused the program)", name))
}

// block runs body in a scope of its own.
func (in *interp) block(body []Stmt) (ctrl, *object) {
	fr := in.top()
	fr.scopes = append(fr.scopes, nil)
	c, v := in.body(body)
	fr.scopes = fr.scopes[:len(fr.scopes)-1]
	return c, v
}

func (in *interp) body(body []Stmt) (ctrl, *object) {
	for _, s := range body {
		if c, v := in.stmt(s); c != ctrlNext {
			return c, v
		}
		in.checkpoint()
	}
	return ctrlNext, nil
}

func (in *interp) checkpoint() {
	seen := map[*object]bool{}
	var ids []int
	var mark func(o *object)
	mark = func(o *object) {
		if o == nil || seen[o] {
			return
		}
		seen[o] = true
		if o.id >= 0 {
			ids = append(ids, o.id)
		}
		for _, f := range o.fields {
			mark(f)
		}
	}
	for _, fr := range in.frames {
		for _, s := range fr.scopes {
			for _, v := range s {
				if !v.moved {
					mark(v.val)
				}
			}
		}
	}
	slices.Sort(ids)
	in.out = append(in.out, ids)
}

func (in *interp) stmt(s Stmt) (ctrl, *object) {
	fr := in.top()
	switch s := s.(type) {
	case *Let:
		v := in.expr(s.X, s)
		fr.scopes[len(fr.scopes)-1] = append(fr.scopes[len(fr.scopes)-1], &ivar{name: s.Name, decl: s, val: v})
	case *Assign:
		v := in.expr(s.X, s)
		in.lookup(s.Name).val = v
	case *If:
		if in.cond(s.Cond) {
			return in.block(s.Then)
		}
		return in.block(s.Else)
	case *Loop:
		for i := 0; i < s.N; i++ {
			fr.counts[s.Counter] = i
			c, v := in.block(s.Body)
			if c == ctrlBreak {
				break
			}
			if c == ctrlReturn {
				return c, v
			}
		}
	case *Block:
		return in.block(s.Body)
	case *Break:
		return ctrlBreak, nil
	case *Continue:
		return ctrlContinue, nil
	case *Return:
		var v *object
		if s.Var != "" {
			v = in.lookup(s.Var).val
		}
		return ctrlReturn, v
	}
	return ctrlNext, nil
}

func (in *interp) cond(c Cond) bool {
	if c.Counter == "" {
		return c.K != 0
	}
	return in.top().counts[c.Counter] == c.K
}

func (in *interp) make(size uint64, fields []*object) *object {
	o := &object{id: in.next, size: size, fields: fields}
	in.next++
	return o
}

// expr evaluates x, the value of statement at.
func (in *interp) expr(x Expr, at Stmt) *object {
	fr := in.top()
	switch x := x.(type) {
	case *Var:
		v := in.lookup(x.Name)
		if fr.facts.moves[at] {
			v.moved = true
		}
		return v.val
	case *Op:
		size := x.Size
		if len(x.Args) > 0 {
			size = in.lookup(x.Args[0]).val.size
		}
		return in.make(size, nil)
	case *StructLit:
		if len(x.Fields) == 0 {
			return nil
		}
		fs := make([]*object, len(x.Fields))
		for i, n := range x.Fields {
			fs[i] = in.lookup(n).val
		}
		return in.make(structSize(len(fs)), fs)
	case *Field:
		return in.lookup(x.Var).val.fields[x.Index]
	case *Call:
		args := make([]*object, len(x.Args))
		for i, n := range x.Args {
			args[i] = in.lookup(n).val
		}
		return in.call(x.Func, args)
	case *IfExpr:
		body, val := x.Else, x.ElseVal
		if in.cond(x.Cond) {
			body, val = x.Then, x.ThenVal
		}
		return in.blockValue(body, val)
	case *BlockExpr:
		return in.blockValue(x.Body, x.Val)
	}
	return nil
}

func (in *interp) blockValue(body []Stmt, val string) *object {
	fr := in.top()
	fr.scopes = append(fr.scopes, nil)
	in.body(body)
	v := in.lookup(val).val
	fr.scopes = fr.scopes[:len(fr.scopes)-1]
	return v
}
