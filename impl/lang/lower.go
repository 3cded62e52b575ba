package lang

import (
	"fmt"
	"slices"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// The lowering: the program run as TensorLogic's compiled code runs it,
// one runtime call for each thing the compiler emits. The rules, from the
// seeds' codegen (each is the place a codegen fault of impl.Catalog
// breaks it, when the runtime has that fault on):
//
//   - a function enters a frame sized by the slot planner
//     (FnEnter(plan.Size), MethodEnter for a method) and a scope. Its slot
//     variables (the tensor variables a tensor operation defines) keep
//     their data in the frame from their let to their last use (a use in
//     a loop the variable is declared outside of lasts to the loop's
//     end): impl's PlanFrame gives each a slot, sharing one between
//     variables whose lifetimes do not meet (planner-shares-overlapping,
//     and a slot that grows, arena-grow-frees-old, are the runtime's
//     faults that this shows). A tensor operation computes into its
//     variable's slot (ArenaGet), reads its operands through their slots
//     and their heap tensors, and keeps the result as a heap tensor too
//     (Alloc, which registers it in the top scope);
//   - parameters are borrowed: no register, no acquire; the callee never
//     releases them (callee-releases-borrowed);
//   - `let x = y` acquires and registers y's value, unless this is y's
//     last use: then the value moves (unregister y's record, register
//     x's) with no acquire, and y's scope does not release it
//     (move-still-released);
//   - a struct literal's StructInit acquires its fields; nothing else
//     does (emit-retain-over-retains); an empty struct is NULL;
//   - a field read acquires and registers the field;
//   - reassignment binds the new value, then releases the old one;
//   - a variable reassigned from a nested block owns its value without a
//     scope record (its let unregisters it) and is released explicitly by
//     every exit from its block;
//   - `return y` unregisters y (shallow, for a struct) when a record of
//     the function's own scopes owns it, and acquires it when it is
//     borrowed; the caller registers what it receives
//     (caller-does-not-register-result, returned-value-registered-twice);
//   - an if or block expression's value leaves its block the same way:
//     unregistered if the block owns it, acquired otherwise
//     (block-result-freed);
//   - every exit (the end of a block, break, continue, return) exits
//     exactly the scopes it leaves, innermost first
//     (return-cleans-innermost-scope, break-in-if-skips-cleanup).

// Lowered is what a lowered run showed: the objects alive in the runtime
// after each statement (numbered in the order they were made, as the
// interpreter numbers them), and the runtime's errors, each naming its
// statement.
type Lowered struct {
	Alive  []Alive
	Errors []error
}

// Lower runs p's lowering on rt, then calls rt.End. The runtime should be
// fresh, with Config.Record set to collect the trace; its faults decide
// which codegen faults the lowering has (rt.HasFault). An ill-formed
// program is an error and makes no call.
func Lower(p *Program, rt *impl.Runtime) (*Lowered, error) {
	if err := Check(p); err != nil {
		return nil, err
	}
	l := &lowering{p: p, rt: rt, ids: map[traces.Addr]int{}, fields: map[traces.Addr][]traces.Addr{},
		sizes: map[traces.Addr]uint64{}, out: &Lowered{}, known: map[*Func]facts{}, plans: map[*Func]impl.Plan{}}
	l.call(0, nil)
	l.note("end", rt.End())
	return l.out, nil
}

type lvar struct {
	name  string
	decl  *Let
	addr  traces.Addr
	param bool // borrowed
	slot  bool // owned without a record
	moved bool
	// buf holds the variable's data in its arena slot (0: none, as when
	// its value came from anywhere but a tensor operation), size bytes.
	buf  traces.Addr
	size uint64
	tmp  string // its name in the trace
}

type lscope struct {
	vars []*lvar
	loop bool // a loop body: break and continue leave it
}

type lframe struct {
	fn     *Func
	facts  facts
	plan   impl.Plan
	scopes []*lscope
	counts map[string]int
	ifs    int           // open if statements inside the innermost loop body
	args   []traces.Addr // the borrowed arguments
}

type lowering struct {
	p      *Program
	rt     *impl.Runtime
	frames []*lframe
	ids    map[traces.Addr]int           // the number of the object at each live address
	fields map[traces.Addr][]traces.Addr // a struct's fields, as its memory holds them
	sizes  map[traces.Addr]uint64        // a tensor's size
	next   int
	out    *Lowered
	state  traces.State
	known  map[*Func]facts
	plans  map[*Func]impl.Plan
	buf    traces.Addr // the arena buffer the last tensor operation computed into
}

// facts are fn's static facts, analysed once a run.
func (l *lowering) facts(fn *Func) facts {
	f, ok := l.known[fn]
	if !ok {
		f = analyze(fn)
		l.known[fn] = f
	}
	return f
}

func (l *lowering) top() *lframe { return l.frames[len(l.frames)-1] }

func (l *lowering) has(f impl.Fault) bool { return l.rt.HasFault(f) }

// note keeps a runtime error, naming where it happened.
func (l *lowering) note(where string, err error) {
	if err != nil {
		fn := "-"
		if len(l.frames) > 0 {
			fn = l.top().fn.Name
		}
		l.out.Errors = append(l.out.Errors, fmt.Errorf("fn %s, %s: %w", fn, where, err))
	}
}

// made numbers a new object, as the interpreter numbers it: every tensor
// operation and non-empty struct literal counts, even one the runtime
// refused.
func (l *lowering) made(a traces.Addr) {
	if a != 0 {
		l.ids[a] = l.next
	}
	l.next++
}

func (l *lowering) checkpoint() {
	l.rt.StateInto(&l.state)
	ids := make([]int, 0, len(l.state.Objects))
	for a := range l.state.Objects {
		if id, ok := l.ids[a]; ok {
			ids = append(ids, id)
		} else {
			ids = append(ids, -1) // an object the program never made
		}
	}
	slices.Sort(ids)
	l.out.Alive = append(l.out.Alive, ids)
}

func (l *lowering) call(fi int, args []traces.Addr) traces.Addr {
	fn := l.p.Funcs[fi]
	fr := &lframe{fn: fn, facts: l.facts(fn), counts: map[string]int{}, args: args}
	// The slot variables keep their data in the frame from their let to
	// their last use: the planner gives them slots, and lets those whose
	// lifetimes do not meet share one.
	plan, ok := l.plans[fn]
	if !ok {
		var err error
		plan, err = l.rt.PlanFrame(fr.facts.lives)
		l.note("plan", err)
		l.plans[fn] = plan
	}
	fr.plan = plan
	l.frames = append(l.frames, fr)
	if fn.Method {
		l.note("method_enter", l.rt.MethodEnter(plan.Size))
	} else {
		l.note("fn_enter", l.rt.FnEnter(plan.Size))
	}
	l.enter(false)
	for i, q := range fn.Params {
		fr.scopes[0].vars = append(fr.scopes[0].vars, &lvar{name: q.Name, addr: args[i], param: true})
	}
	c, ret := l.body(fn.Body)
	if c != ctrlReturn {
		l.leave(len(fr.scopes))
		l.exitFn()
	}
	l.frames = l.frames[:len(l.frames)-1]
	return ret
}

// exitFn ends the top frame's call: the scopes are already left.
func (l *lowering) exitFn() {
	fr := l.top()
	if l.has(impl.FaultCalleeReleasesBorrowed) {
		for _, a := range fr.args {
			l.note("release of a borrowed argument", l.rt.Release(a))
		}
	}
	l.note("fn_exit", l.rt.FnExit())
}

func (l *lowering) enter(loop bool) {
	fr := l.top()
	fr.scopes = append(fr.scopes, &lscope{loop: loop})
	l.note("scope_enter", l.rt.ScopeEnter())
}

// leave exits the top n scopes of the frame, innermost first: the
// variables that own their values without a record are released, then
// the scope is exited, which releases its records.
func (l *lowering) leave(n int) {
	fr := l.top()
	for range n {
		s := fr.scopes[len(fr.scopes)-1]
		l.exitScope(s)
		fr.scopes = fr.scopes[:len(fr.scopes)-1]
	}
}

func (l *lowering) exitScope(s *lscope) {
	for i := len(s.vars) - 1; i >= 0; i-- {
		if v := s.vars[i]; v.slot {
			l.note("release of "+v.name, l.rt.Release(v.addr))
		}
	}
	l.note("scope_exit", l.rt.ScopeExit())
}

// forget drops the top n scopes from the books without exiting them: a
// break, continue or return already did, or, under a fault, did not.
func (l *lowering) forget(n int) {
	fr := l.top()
	fr.scopes = fr.scopes[:len(fr.scopes)-n]
}

func (l *lowering) lookup(name string) (*lvar, int) {
	fr := l.top()
	for i := len(fr.scopes) - 1; i >= 0; i-- {
		s := fr.scopes[i].vars
		for j := len(s) - 1; j >= 0; j-- {
			if s[j].name == name {
				return s[j], i
			}
		}
	}
	panic(fmt.Sprintf("lang: variable %s is not in scope (Check should have refused the program)", name))
}

func (l *lowering) block(body []Stmt, loop bool) (ctrl, traces.Addr) {
	fr := l.top()
	l.enter(loop)
	depth := len(fr.scopes)
	c, v := l.body(body)
	if c == ctrlNext {
		l.leave(1)
	} else {
		l.forget(len(fr.scopes) - depth + 1)
	}
	return c, v
}

func (l *lowering) body(body []Stmt) (ctrl, traces.Addr) {
	for _, s := range body {
		if c, v := l.stmt(s); c != ctrlNext {
			return c, v
		}
		l.checkpoint()
	}
	return ctrlNext, 0
}

// loopDepth is how many scopes a break or continue leaves: up to and
// including the innermost loop body.
func (l *lowering) loopDepth() int {
	fr := l.top()
	for i := len(fr.scopes) - 1; i >= 0; i-- {
		if fr.scopes[i].loop {
			return len(fr.scopes) - i
		}
	}
	return 0
}

func (l *lowering) stmt(s Stmt) (ctrl, traces.Addr) {
	fr := l.top()
	switch s := s.(type) {
	case *Let:
		a, how := l.expr(s.X, s)
		v := &lvar{name: s.Name, decl: s, slot: fr.facts.slotOwned[s]}
		l.bind(v, a, how, s)
		l.keep(v, s.X)
		top := fr.scopes[len(fr.scopes)-1]
		top.vars = append(top.vars, v)
	case *Assign:
		a, how := l.expr(s.X, s)
		v, _ := l.lookup(s.Name)
		old := v.addr
		l.bind(v, a, how, s)
		l.keep(v, s.X)
		if !v.slot {
			l.note("unregister of the old "+s.Name, l.rt.Unregister(old))
		}
		l.note("release of the old "+s.Name, l.rt.Release(old))
	case *If:
		body := s.Else
		if l.cond(s.Cond) {
			body = s.Then
		}
		fr.ifs++
		c, v := l.block(body, false)
		fr.ifs--
		return c, v
	case *Loop:
		saved := fr.ifs
		fr.ifs = 0
		defer func() { fr.ifs = saved }()
		for i := 0; i < s.N; i++ {
			fr.counts[s.Counter] = i
			c, v := l.block(s.Body, true)
			if c == ctrlBreak {
				break
			}
			if c == ctrlReturn {
				return c, v
			}
		}
	case *Block:
		return l.block(s.Body, false)
	case *Break, *Continue:
		c := ctrlBreak
		if _, ok := s.(*Continue); ok {
			c = ctrlContinue
		}
		n := l.loopDepth()
		if fr.ifs > 0 && l.has(impl.FaultBreakInIfSkipsCleanup) {
			n = 0 // the bug: the jump out of the if emits no cleanup at all
		}
		l.exits(n)
		return c, 0
	case *Return:
		var a traces.Addr
		if s.Var != "" {
			a = l.escape(s.Var, len(fr.scopes), false)
		}
		n := len(fr.scopes)
		if l.has(impl.FaultReturnCleansInnermost) {
			n = 1
		}
		l.exits(n)
		l.exitFn()
		return ctrlReturn, a
	}
	return ctrlNext, 0
}

// keep notes where v's data is now: in the arena buffer the tensor
// operation x computed into, or, for any other value, nowhere in the
// frame.
func (l *lowering) keep(v *lvar, x Expr) {
	v.buf, v.size = 0, 0
	if op, ok := x.(*Op); ok {
		fr := l.top()
		v.buf, v.size, v.tmp = l.buf, l.sizes[v.addr], fr.facts.names[fr.facts.ops[op]]
	}
}

// exits exits the top n scopes without dropping them from the books (the
// blocks unwinding do that).
func (l *lowering) exits(n int) {
	fr := l.top()
	for i := range n {
		l.exitScope(fr.scopes[len(fr.scopes)-1-i])
	}
}

// escape prepares name's value to leave the top n scopes (a return, or an
// if or block expression's value): a value a record in those scopes owns
// is unregistered, so that their exit does not release it; any other
// (borrowed, from an outer scope, or owned without a record) is acquired.
// Either way one count travels with the value, and no record.
func (l *lowering) escape(name string, n int, block bool) traces.Addr {
	fr := l.top()
	v, at := l.lookup(name)
	if at >= len(fr.scopes)-n && !v.param && !v.slot {
		if block && l.has(impl.FaultBlockResultFreed) {
			return v.addr // the bug: the block's exit frees its own result
		}
		l.note("unregister of "+name, l.rt.Unregister(v.addr))
		return v.addr
	}
	l.note("acquire of "+name, l.rt.Acquire(v.addr))
	return v.addr
}

// how says what a value owes before a variable owns it.
type how int

const (
	fresh    how = iota // a count and a record in the top scope
	returned            // a count, no record: a call's result
	escaped             // a count, no record: an if or block expression's value
	borrowed            // neither: another variable's value
	moved               // another variable's value at its last use
)

// bind makes v own a, which came as how says.
func (l *lowering) bind(v *lvar, a traces.Addr, h how, at Stmt) {
	v.addr = a
	switch h {
	case fresh:
		if v.slot {
			l.note("unregister of "+v.name, l.rt.Unregister(a))
		}
	case escaped:
		if !v.slot {
			l.note("register of "+v.name, l.rt.Register(a))
		}
	case returned:
		if !v.slot {
			if l.has(impl.FaultCallerNoRegister) {
				return
			}
			l.note("register of "+v.name, l.rt.Register(a))
			if l.has(impl.FaultRegisterTwice) {
				l.note("register of "+v.name, l.rt.Register(a))
			}
		}
	case borrowed:
		l.note("acquire for "+v.name, l.rt.Acquire(a))
		if !v.slot {
			l.note("register of "+v.name, l.rt.Register(a))
		}
	case moved:
		if !l.has(impl.FaultMoveStillReleased) {
			l.note("unregister of the moved value", l.rt.Unregister(a))
		}
		l.note("register of "+v.name, l.rt.Register(a))
	}
}

func (l *lowering) cond(c Cond) bool {
	if c.Counter == "" {
		return c.K != 0
	}
	return l.top().counts[c.Counter] == c.K
}

// expr evaluates x, the value of statement at, and says how it came.
func (l *lowering) expr(x Expr, at Stmt) (traces.Addr, how) {
	fr := l.top()
	switch x := x.(type) {
	case *Var:
		v, _ := l.lookup(x.Name)
		if fr.facts.moves[at] {
			v.moved = true
			return v.addr, moved
		}
		return v.addr, borrowed
	case *Op:
		return l.op(x), fresh
	case *StructLit:
		fs := make([]traces.Addr, len(x.Fields))
		for i, n := range x.Fields {
			v, _ := l.lookup(n)
			fs[i] = v.addr
		}
		a, err := l.rt.StructInit(structSize(len(fs)), fs)
		l.note("struct_init", err)
		if len(fs) > 0 {
			l.made(a)
			l.fields[a] = fs
		}
		if l.has(impl.FaultEmitRetainOverRetains) {
			for _, f := range fs {
				l.note("emit_retain", l.rt.Acquire(f))
			}
		}
		return a, fresh
	case *Field:
		v, _ := l.lookup(x.Var)
		fs := l.fields[v.addr]
		l.note("read of "+x.Var, l.rt.Read(v.addr, structSize(len(fs)), ""))
		if x.Index >= len(fs) {
			return 0, borrowed // a struct the runtime refused to make
		}
		return fs[x.Index], borrowed
	case *Call:
		args := make([]traces.Addr, len(x.Args))
		for i, n := range x.Args {
			v, _ := l.lookup(n)
			args[i] = v.addr
		}
		return l.call(x.Func, args), returned
	case *IfExpr:
		body, val := x.Else, x.ElseVal
		if l.cond(x.Cond) {
			body, val = x.Then, x.ThenVal
		}
		return l.blockValue(body, val), escaped
	case *BlockExpr:
		return l.blockValue(x.Body, x.Val), escaped
	}
	return 0, fresh
}

func (l *lowering) blockValue(body []Stmt, val string) traces.Addr {
	l.enter(false)
	l.body(body)
	a := l.escape(val, 1, true)
	l.leave(1)
	return a
}

// op computes a tensor operation into the arena slot of the variable it
// defines, reading its operands from their slots (those whose data is in
// the frame) and their heap tensors, and keeps the result as a heap
// tensor too: TensorLogic's kernels work in the frame, and the value that
// may outlive the frame is allocated.
func (l *lowering) op(x *Op) traces.Addr {
	fr := l.top()
	k := fr.facts.ops[x]
	size := x.Size
	var args []*lvar
	for _, n := range x.Args {
		v, _ := l.lookup(n)
		args = append(args, v)
	}
	if len(args) > 0 {
		size = l.sizes[args[0].addr]
	}
	tmp := fr.facts.names[k]
	slot := 0
	if k < len(fr.plan.Slots) {
		slot = fr.plan.Slots[k]
	}
	buf, err := l.rt.ArenaGet(slot, size, tmp)
	l.note("arena_get", err)
	l.buf = buf
	for _, v := range args {
		if v.buf != 0 {
			l.note("read of "+v.name+"'s slot", l.rt.Read(v.buf, v.size, v.tmp))
		}
		l.note("read of "+v.name, l.rt.Read(v.addr, l.sizes[v.addr], ""))
	}
	l.note("write of "+tmp, l.rt.Write(buf, size, tmp))
	a, err := l.rt.Alloc(size)
	l.note("alloc", err)
	l.made(a)
	l.sizes[a] = size
	l.note("read of "+tmp, l.rt.Read(buf, size, tmp))
	l.note("write of the result", l.rt.Write(a, size, ""))
	return a
}
