package lang

// The shrinker works on the source, so a counterexample is a short program
// a person can read: it tries one edit at a time (drop a statement, drop
// a function no one calls or a parameter it never reads, inline a call, unwrap an if, a loop or an if
// expression, run a loop once less, replace a value by a fresh tensor) and keeps
// an edit when the program is still well formed and still fails.

// maxShrinkTries bounds the candidate programs Shrink runs.
const maxShrinkTries = 3000

// Shrink returns the smallest program it finds, from p, for which fails
// is true; fails(p) should be true. p is not modified.
func Shrink(p *Program, fails func(*Program) bool) *Program {
	cur := p
	tries := 0
	for k := 0; tries < maxShrinkTries; k++ {
		q, ok := edit(cur, k)
		if !ok {
			break
		}
		if q == nil || Check(q) != nil {
			continue
		}
		tries++
		if fails(q) {
			cur, k = q, -1
		}
	}
	return cur
}

// edit returns a copy of p with its k-th edit applied, in a fixed order;
// false when p has fewer edits. A nil program is an edit that does not
// apply.
func edit(p *Program, k int) (*Program, bool) {
	q := clone(p)
	e := &editor{p: q, k: k}
	// Functions first: dropping one removes the most.
	for i := len(q.Funcs) - 1; i >= 1; i-- {
		if e.next() {
			return dropFunc(q, i), true
		}
	}
	// Then parameters: one the body never reads goes, with its
	// argument at every call (Check refuses the edit where it is read).
	for i := 1; i < len(q.Funcs); i++ {
		for j := range q.Funcs[i].Params {
			if e.next() {
				return dropParam(q, i, j), true
			}
		}
	}
	for _, f := range q.Funcs {
		if e.list(&f.Body) {
			return e.out, true
		}
	}
	return nil, false
}

// dropParam removes parameter j of function i and the argument of every
// call that passes it.
func dropParam(p *Program, i, j int) *Program {
	f := p.Funcs[i]
	f.Params = append(f.Params[:j:j], f.Params[j+1:]...)
	walkCalls(p, func(c *Call) {
		if c.Func == i && j < len(c.Args) {
			c.Args = append(c.Args[:j:j], c.Args[j+1:]...)
		}
	})
	return p
}

type editor struct {
	p   *Program
	k   int
	out *Program
}

// next reports whether this is the edit asked for, counting it.
func (e *editor) next() bool {
	e.k--
	return e.k == -1
}

// list offers the edits of a statement list: each statement dropped, then
// each statement's own edits.
func (e *editor) list(body *[]Stmt) bool {
	for i := range *body {
		if e.next() {
			*body = append((*body)[:i:i], (*body)[i+1:]...)
			e.out = e.p
			return true
		}
	}
	for i := range *body {
		if e.stmt(body, i) {
			return true
		}
	}
	return false
}

func (e *editor) done(ok bool) bool {
	if ok {
		e.out = e.p
	}
	return ok
}

func (e *editor) stmt(body *[]Stmt, i int) bool {
	switch s := (*body)[i].(type) {
	case *Let:
		return e.value(&s.X)
	case *Assign:
		return e.value(&s.X)
	case *If:
		if e.next() {
			(*body)[i] = &Block{Body: s.Then}
			return e.done(true)
		}
		if e.next() {
			(*body)[i] = &Block{Body: s.Else}
			return e.done(true)
		}
		return e.list(&s.Then) || e.list(&s.Else)
	case *Loop:
		if s.N > 1 && e.next() {
			s.N-- // one step at a time: a break at i == 2 needs three runs
			return e.done(true)
		}
		if e.next() {
			(*body)[i] = &Block{Body: s.Body}
			return e.done(true)
		}
		return e.list(&s.Body)
	case *Block:
		if e.next() {
			*body = append((*body)[:i:i], append(s.Body, (*body)[i+1:]...)...)
			return e.done(true)
		}
		return e.list(&s.Body)
	}
	return false
}

// value offers the edits of a let's or an assignment's value.
func (e *editor) value(x *Expr) bool {
	if _, ok := (*x).(*Op); !ok || len((*x).(*Op).Args) > 0 {
		if e.next() {
			*x = &Op{Size: 16}
			return e.done(true)
		}
	}
	switch v := (*x).(type) {
	case *Call:
		if e.next() {
			in := inline(e.p, v)
			if in == nil {
				e.out = nil
				return true
			}
			*x = in
			return e.done(true)
		}
	case *IfExpr:
		if e.next() {
			*x = &BlockExpr{Body: v.Then, Val: v.ThenVal}
			return e.done(true)
		}
		if e.next() {
			*x = &BlockExpr{Body: v.Else, Val: v.ElseVal}
			return e.done(true)
		}
		return e.list(&v.Then) || e.list(&v.Else)
	case *BlockExpr:
		return e.list(&v.Body)
	}
	return false
}

// inline turns a call into a block expression: the parameters bound to
// the arguments, the callee's body, its value. Only a callee whose one
// return is its last statement can be inlined so.
func inline(p *Program, c *Call) Expr {
	f := p.Funcs[c.Func]
	body := clone(&Program{Funcs: []*Func{f}}).Funcs[0].Body
	if len(body) == 0 {
		return nil
	}
	ret, ok := body[len(body)-1].(*Return)
	if !ok || hasReturn(body[:len(body)-1]) {
		return nil
	}
	var out []Stmt
	for i, q := range f.Params {
		out = append(out, &Let{q.Name, &Var{c.Args[i]}})
	}
	out = append(out, body[:len(body)-1]...)
	return &BlockExpr{Body: out, Val: ret.Var}
}

func hasReturn(body []Stmt) bool {
	for _, s := range body {
		switch s := s.(type) {
		case *Return:
			return true
		case *If:
			if hasReturn(s.Then) || hasReturn(s.Else) {
				return true
			}
		case *Loop:
			if hasReturn(s.Body) {
				return true
			}
		case *Block:
			if hasReturn(s.Body) {
				return true
			}
		}
	}
	return false
}

// dropFunc removes function i if nothing calls it, renumbering the calls
// of the functions after it.
func dropFunc(p *Program, i int) *Program {
	called := false
	walkCalls(p, func(c *Call) {
		called = called || c.Func == i
	})
	if called {
		return nil
	}
	p.Funcs = append(p.Funcs[:i:i], p.Funcs[i+1:]...)
	walkCalls(p, func(c *Call) {
		if c.Func > i {
			c.Func--
		}
	})
	return p
}

func walkCalls(p *Program, f func(*Call)) {
	for _, fn := range p.Funcs {
		inspect(fn.Body, nil, func(x Expr) {
			if c, ok := x.(*Call); ok {
				f(c)
			}
		})
	}
}

// clone copies p deeply: an edit never touches the program it came from.
func clone(p *Program) *Program {
	q := &Program{Structs: p.Structs}
	for _, f := range p.Funcs {
		g := *f
		g.Params = append([]Param(nil), f.Params...)
		g.Body = cloneBody(f.Body)
		q.Funcs = append(q.Funcs, &g)
	}
	return q
}

func cloneBody(b []Stmt) []Stmt {
	if b == nil {
		return nil
	}
	out := make([]Stmt, len(b))
	for i, s := range b {
		switch s := s.(type) {
		case *Let:
			out[i] = &Let{s.Name, cloneExpr(s.X)}
		case *Assign:
			out[i] = &Assign{s.Name, cloneExpr(s.X)}
		case *If:
			out[i] = &If{Cond: s.Cond, Then: cloneBody(s.Then), Else: cloneBody(s.Else)}
		case *Loop:
			out[i] = &Loop{Counter: s.Counter, N: s.N, Body: cloneBody(s.Body)}
		case *Block:
			out[i] = &Block{Body: cloneBody(s.Body)}
		case *Break:
			out[i] = &Break{}
		case *Continue:
			out[i] = &Continue{}
		case *Return:
			out[i] = &Return{s.Var}
		default:
			out[i] = s
		}
	}
	return out
}

func cloneExpr(x Expr) Expr {
	switch x := x.(type) {
	case *Var:
		return &Var{x.Name}
	case *Op:
		return &Op{Size: x.Size, Args: append([]string(nil), x.Args...)}
	case *StructLit:
		return &StructLit{Type: x.Type, Fields: append([]string(nil), x.Fields...)}
	case *Field:
		return &Field{Var: x.Var, Index: x.Index}
	case *Call:
		return &Call{Func: x.Func, Args: append([]string(nil), x.Args...)}
	case *IfExpr:
		return &IfExpr{Cond: x.Cond, Then: cloneBody(x.Then), Else: cloneBody(x.Else), ThenVal: x.ThenVal, ElseVal: x.ElseVal}
	case *BlockExpr:
		return &BlockExpr{Body: cloneBody(x.Body), Val: x.Val}
	}
	return x
}

// Statements counts p's statements, nested ones included: the size of a
// counterexample.
func Statements(p *Program) int {
	n := 0
	for _, f := range p.Funcs {
		inspect(f.Body, func(Stmt) { n++ }, nil)
	}
	return n
}
