package lang

// The static facts the lowering needs and the interpreter shares, so that
// the two agree on what the language means: which uses of a variable are
// its last (a move), and which variables are reassigned from a nested
// block (owned by the variable itself, not by a scope record).

// facts are a function's static facts.
type facts struct {
	// moves holds the Let and Assign statements whose value is a
	// variable read for the last time: the value moves, and the source
	// variable no longer owns it.
	moves map[Stmt]bool
	// slotOwned holds the Lets whose variable is reassigned inside a
	// block nested in the one that declares it. A scope record would
	// release the old value at the inner block's end, so such a variable
	// owns its value without a record and is released by every exit
	// from its block.
	slotOwned map[*Let]bool
	// ops numbers the function's tensor operations in order: their
	// arena temporaries, planned by the slot planner.
	ops map[*Op]int
}

// use is one read of a binding.
type use struct {
	at    Stmt // the Let or Assign whose value it is, if it is all of it
	scope int  // the block the use is in
}

type binding struct {
	decl  *Let // nil for a parameter
	scope int  // the block that declares it
	uses  []use
}

type analyzer struct {
	f        facts
	scopes   []map[string]*binding
	ids      []int // block id of each open scope
	nextID   int
	bindings []*binding
	declOf   map[*Let]*binding
	targets  map[*Assign]*binding
	sources  map[Stmt]*binding
}

func analyze(fn *Func) facts {
	a := &analyzer{f: facts{moves: map[Stmt]bool{}, slotOwned: map[*Let]bool{}, ops: map[*Op]int{}},
		declOf: map[*Let]*binding{}, targets: map[*Assign]*binding{}, sources: map[Stmt]*binding{}}
	a.open()
	for _, p := range fn.Params {
		a.declare(p.Name, nil)
	}
	a.body(fn.Body)
	for _, b := range a.bindings {
		if b.decl == nil || a.f.slotOwned[b.decl] || len(b.uses) == 0 {
			continue
		}
		last := b.uses[len(b.uses)-1]
		// Only a move within the declaring block: a scope record names
		// an object, not a variable, and unregister takes the object's
		// newest record, which is the source's only if both are in the
		// top scope. There a move changes no record at all. (The use is
		// then in no loop the declaration is outside of, too.)
		if last.at != nil && last.scope == b.scope {
			a.f.moves[last.at] = true
		}
	}
	// A move into a variable that owns its value without a record (or
	// into a parameter), or of a variable into itself, is a copy.
	for st := range a.f.moves {
		var target *binding
		switch st := st.(type) {
		case *Let:
			target = a.declOf[st]
		case *Assign:
			target = a.targets[st]
		}
		if target == nil || target.decl == nil || a.f.slotOwned[target.decl] || target == a.sources[st] {
			delete(a.f.moves, st)
		}
	}
	return a.f
}

func (a *analyzer) open() {
	a.nextID++
	a.scopes = append(a.scopes, map[string]*binding{})
	a.ids = append(a.ids, a.nextID)
}

func (a *analyzer) close() {
	a.scopes = a.scopes[:len(a.scopes)-1]
	a.ids = a.ids[:len(a.ids)-1]
}

func (a *analyzer) declare(name string, decl *Let) {
	b := &binding{decl: decl, scope: a.ids[len(a.ids)-1]}
	a.scopes[len(a.scopes)-1][name] = b
	a.bindings = append(a.bindings, b)
	if decl != nil {
		a.declOf[decl] = b
	}
}

func (a *analyzer) lookup(name string) *binding {
	for i := len(a.scopes) - 1; i >= 0; i-- {
		if b, ok := a.scopes[i][name]; ok {
			return b
		}
	}
	return nil
}

func (a *analyzer) read(name string, at Stmt) {
	if b := a.lookup(name); b != nil {
		b.uses = append(b.uses, use{at: at, scope: a.ids[len(a.ids)-1]})
		if at != nil {
			a.sources[at] = b
		}
	}
}

func (a *analyzer) block(body []Stmt) {
	a.open()
	a.body(body)
	a.close()
}

func (a *analyzer) body(body []Stmt) {
	for _, s := range body {
		a.stmt(s)
	}
}

func (a *analyzer) stmt(s Stmt) {
	switch s := s.(type) {
	case *Let:
		a.expr(s.X, s)
		a.declare(s.Name, s)
	case *Assign:
		a.expr(s.X, s)
		if b := a.lookup(s.Name); b != nil {
			a.targets[s] = b
			// The assignment reads the old value (to drop it): a use,
			// so no earlier read of the variable counts as its last.
			b.uses = append(b.uses, use{scope: a.ids[len(a.ids)-1]})
			if b.decl != nil && b.scope != a.ids[len(a.ids)-1] {
				a.f.slotOwned[b.decl] = true
			}
		}
	case *If:
		a.block(s.Then)
		a.block(s.Else)
	case *Loop:
		a.block(s.Body)
	case *Block:
		a.block(s.Body)
	case *Return:
		if s.Var != "" {
			a.read(s.Var, nil)
		}
	}
}

func (a *analyzer) expr(x Expr, at Stmt) {
	switch x := x.(type) {
	case *Var:
		a.read(x.Name, at)
	case *Op:
		a.f.ops[x] = len(a.f.ops)
		for _, n := range x.Args {
			a.read(n, nil)
		}
	case *StructLit:
		for _, n := range x.Fields {
			a.read(n, nil)
		}
	case *Field:
		a.read(x.Var, nil)
	case *Call:
		for _, n := range x.Args {
			a.read(n, nil)
		}
	case *IfExpr:
		a.open()
		a.body(x.Then)
		a.read(x.ThenVal, nil)
		a.close()
		a.open()
		a.body(x.Else)
		a.read(x.ElseVal, nil)
		a.close()
	case *BlockExpr:
		a.open()
		a.body(x.Body)
		a.read(x.Val, nil)
		a.close()
	}
}
