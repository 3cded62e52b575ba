package lang

import (
	"fmt"

	"github.com/tlcheck/tlcheck/impl"
)

// The static facts the lowering needs and the interpreter shares, so that
// the two agree on what the language means: which uses of a variable are
// its last (a move), which variables are reassigned from a nested block
// (owned by the variable itself, not by a scope record), and which tensor
// variables keep their data in an arena slot, from when to when.

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
	// ops maps each tensor operation to the slot variable it computes
	// into: the variable its let or assignment binds.
	ops map[*Op]int
	// slotVars are the function's slot variables, in the order of their
	// declarations: the tensor variables that a tensor operation defines
	// (by their let or an assignment). Each keeps its data in an arena
	// slot of the frame from its let to its last use, as TensorLogic's
	// compiled code keeps a tensor variable in its frame: lives[i] is
	// that lifetime, in statements numbered in the order the source
	// lists them (nested bodies after the statement that holds them), and
	// names[i] the variable's name in the trace (unique in the function).
	lives []impl.Interval
	names []string
	// slots maps each slot variable's let to its index. A local of a
	// struct type with fields is a slot variable too: its slot is the
	// destination a struct is returned into (see lower.go) or copied to.
	slots map[*Let]int
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
	// For the arena: the statement that declares it, the last statement
	// that uses it, the loops it is declared in (how deep), the
	// outermost loop around its last use that it is declared outside of
	// (nil: that use is in none), and its slot variable (-1: none yet).
	first, last int
	loops       int
	loop        *loopSpan
	slot        int
	name        string
	typ         Type
}

// loopSpan is a loop's statements, first to last: a variable declared
// outside it and used inside it lives through all of it, as the next
// iteration may use it again.
type loopSpan struct{ first, last int }

type analyzer struct {
	p        *Program
	f        facts
	scopes   []map[string]*binding
	ids      []int // block id of each open scope
	nextID   int
	bindings []*binding
	declOf   map[*Let]*binding
	targets  map[*Assign]*binding
	sources  map[Stmt]*binding
	n        int         // statements numbered so far
	loops    []*loopSpan // the loops open now, outermost first
	slotted  []*binding  // the slot variables, by slot index
	// firstLoopOnly is the loop-life-ends-first-loop fault: a use
	// extends a lifetime to the end of the first loop around a use only.
	firstLoopOnly bool
}

// analyze finds fn's static facts; with firstLoopOnly, the liveness has
// the loop-life-ends-first-loop fault.
func analyze(p *Program, fn *Func, firstLoopOnly bool) facts {
	a := &analyzer{p: p, f: facts{moves: map[Stmt]bool{}, slotOwned: map[*Let]bool{}, ops: map[*Op]int{}, slots: map[*Let]int{}},
		declOf: map[*Let]*binding{}, targets: map[*Assign]*binding{}, sources: map[Stmt]*binding{}, firstLoopOnly: firstLoopOnly}
	a.open()
	for _, q := range fn.Params {
		a.declare(q.Name, nil, q.Type)
	}
	a.body(fn.Body)
	a.plan()
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

// plan gives each slot variable its lifetime and its name in the trace.
func (a *analyzer) plan() {
	seen := map[string]int{}
	for _, b := range a.slotted {
		seen[b.name]++
	}
	a.f.lives = make([]impl.Interval, len(a.slotted))
	a.f.names = make([]string, len(a.slotted))
	for i, b := range a.slotted {
		last := b.last
		if b.loop != nil {
			last = max(last, b.loop.last)
		}
		a.f.lives[i] = impl.Interval{First: b.first, Last: last}
		a.f.names[i] = b.name
		if seen[b.name] > 1 {
			a.f.names[i] = fmt.Sprintf("%s#%d", b.name, i)
		}
	}
}

// used notes that b is used by the statement numbered last so far. A use
// inside a loop that b is declared outside of keeps b live to that loop's
// end, as the next turn may read it again: b.loop is the outermost such
// loop around the latest use, whichever loop that is. Uses come in source
// order, and every loop b can be used in at depth b.loops is nested in b's
// block, so two of them are the same loop or one lies wholly after the
// other: the latest use's loop ends last. Keeping the first loop instead
// (loop-life-ends-first-loop, as the analysis once did) lets a second
// loop's new variable take b's slot while a later turn still reads b.
func (a *analyzer) used(b *binding) {
	b.last = max(b.last, a.n-1)
	if len(a.loops) > b.loops && (b.loop == nil || !a.firstLoopOnly) {
		b.loop = a.loops[b.loops]
	}
}

// defines notes that tensor operation x computes into b's slot.
func (a *analyzer) defines(b *binding, x Expr) {
	op, ok := x.(*Op)
	if !ok || b == nil || b.decl == nil {
		return
	}
	a.slotFor(b)
	a.f.ops[op] = b.slot
}

// slotFor makes b a slot variable, if it is not one yet.
func (a *analyzer) slotFor(b *binding) {
	if b.slot < 0 {
		b.slot = len(a.slotted)
		a.slotted = append(a.slotted, b)
		a.f.slots[b.decl] = b.slot
	}
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

func (a *analyzer) declare(name string, decl *Let, t Type) {
	b := &binding{decl: decl, scope: a.ids[len(a.ids)-1], first: max(a.n-1, 0), last: max(a.n-1, 0),
		loops: len(a.loops), slot: -1, name: name, typ: t}
	if decl != nil && !t.Tensor && t.Struct >= 0 && t.Struct < len(a.p.Structs) && len(a.p.Structs[t.Struct].Fields) > 0 {
		a.slotFor(b)
	}
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
		a.used(b)
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
	at := a.n
	a.n++
	switch s := s.(type) {
	case *Let:
		t := a.expr(s.X, s)
		n := a.n
		a.n = at + 1 // the variable is declared by the let, before any statement nested in its value
		a.declare(s.Name, s, t)
		a.n = n
		// Its value is written when the statements nested in it are
		// done: it lives from the let through them.
		a.used(a.declOf[s])
		a.defines(a.declOf[s], s.X)
	case *Assign:
		a.expr(s.X, s)
		if b := a.lookup(s.Name); b != nil {
			a.used(b)
			a.defines(b, s.X)
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
		l := &loopSpan{first: at}
		a.loops = append(a.loops, l)
		a.block(s.Body)
		a.loops = a.loops[:len(a.loops)-1]
		l.last = a.n - 1
	case *Block:
		a.block(s.Body)
	case *Return:
		if s.Var != "" {
			a.read(s.Var, nil)
		}
	}
}

func (a *analyzer) expr(x Expr, at Stmt) Type {
	tensor := Type{Tensor: true}
	switch x := x.(type) {
	case *Var:
		a.read(x.Name, at)
		return a.typeOf(x.Name)
	case *Op:
		for _, n := range x.Args {
			a.read(n, nil)
		}
	case *StructLit:
		for _, n := range x.Fields {
			a.read(n, nil)
		}
		return Type{Struct: x.Type}
	case *Field:
		a.read(x.Var, nil)
	case *Call:
		for _, n := range x.Args {
			a.read(n, nil)
		}
		if x.Func >= 0 && x.Func < len(a.p.Funcs) && a.p.Funcs[x.Func].Result != nil {
			return *a.p.Funcs[x.Func].Result
		}
	case *IfExpr:
		a.open()
		a.body(x.Then)
		a.read(x.ThenVal, nil)
		t := a.typeOf(x.ThenVal)
		a.close()
		a.open()
		a.body(x.Else)
		a.read(x.ElseVal, nil)
		a.close()
		return t
	case *BlockExpr:
		a.open()
		a.body(x.Body)
		a.read(x.Val, nil)
		t := a.typeOf(x.Val)
		a.close()
		return t
	}
	return tensor
}

// typeOf is the type of the variable name in scope (a tensor if none is:
// Check refuses such a program before it runs).
func (a *analyzer) typeOf(name string) Type {
	if b := a.lookup(name); b != nil {
		return b.typ
	}
	return Type{Tensor: true}
}
