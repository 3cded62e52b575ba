package lang

import (
	"errors"
	"fmt"
	"slices"
	"strings"

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
//   - `return y` of a tensor (or of NULL, an empty struct) unregisters y
//     when a record of the function's own scopes owns it, and acquires it
//     when it is borrowed; the caller registers what it receives
//     (caller-does-not-register-result, returned-value-registered-twice);
//   - a struct with fields is returned by destination passing, as
//     TensorLogic returns structs (SRET): before the call the caller
//     reserves the destination, the slot of the variable that takes the
//     result (ArenaGet); `return y` writes y into it and acquires y's
//     fields for it, as a struct literal does, and the scopes' exits then
//     release y as any other value (sret-source-kept). The return moves
//     no record and changes no count of a struct: the destination holds
//     the struct by value in the caller's frame and owns its fields
//     without a record, released by every exit from its variable's
//     block; a copy of it (a let, an if or block expression's value, an
//     assignment, whose old value is released) acquires the fields into
//     the copy's own slot, a move takes them;
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
// program is an error and makes no call. A program whose tensors together
// need more than the runtime holds is an error wrapping
// impl.ErrOutOfMemory, naming the function and statement: the interpreter
// has no capacity, so such a run checks nothing, and its refused
// allocations would read as the runtime's bugs (a write of NULL).
func Lower(p *Program, rt *impl.Runtime) (*Lowered, error) {
	if err := Check(p); err != nil {
		return nil, err
	}
	l := &lowering{p: p, rt: rt, ids: map[traces.Addr]int{}, fields: map[traces.Addr][]traces.Addr{},
		sizes: map[traces.Addr]uint64{}, out: &Lowered{}, known: map[*Func]facts{}, plans: map[*Func]impl.Plan{}}
	l.call(0, nil, nil)
	l.note("end", rt.End())
	if l.oom != nil {
		return nil, l.oom
	}
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
	// ds is the struct the variable holds in its destination, when it
	// holds one (then addr is 0): see dstruct.
	ds *dstruct
}

// dstruct is a struct held by value in a frame's slot, where a struct a
// function returns lives: TensorLogic returns a struct by destination
// passing. The caller reserves the destination (its variable's slot)
// before the call; the callee writes the struct into it and acquires
// its fields, as a struct literal does; the return itself changes no
// count and moves no record. The destination owns the fields without a
// record: every exit from its variable's block releases them, and a
// copy (a let from it, an if or block expression's value) acquires them
// again into the copy's own slot.
type dstruct struct {
	buf    traces.Addr
	size   uint64
	fields []traces.Addr
	tmp    string // the variable that owns the slot, in the trace
	depth  int    // the frame it is in: another frame reads it unnamed
}

// value is a variable's value: an object's address, or a struct held in
// a destination.
type value struct {
	addr traces.Addr
	ds   *dstruct
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
	ifs    int      // open if statements inside the innermost loop body
	args   []value  // the borrowed arguments
	dest   *dstruct // where a struct result goes: the caller's destination
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
	at     Stmt        // the innermost statement running, for errors
	oom    error       // the first call the runtime had no room for
}

// facts are fn's static facts, analysed once a run.
func (l *lowering) facts(fn *Func) facts {
	f, ok := l.known[fn]
	if !ok {
		f = analyze(l.p, fn, l.has(FaultLoopLifeEndsFirstLoop))
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
		if l.oom == nil && errors.Is(err, impl.ErrOutOfMemory) {
			l.oom = fmt.Errorf("lang: fn %s, statement %s: the runtime has no room for the program's tensors: %w",
				fn, l.stmtText(), err)
		}
	}
}

// stmtText is the first line of the running statement's source.
func (l *lowering) stmtText() string {
	if l.at == nil {
		return "-"
	}
	var b strings.Builder
	l.p.printStmt(&b, l.at, 0)
	first, _, _ := strings.Cut(b.String(), "\n")
	return "(" + first + ")"
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

// call calls Funcs[fi] with args; a function that returns a struct with
// fields writes it into dest, the caller's destination.
func (l *lowering) call(fi int, args []value, dest *dstruct) value {
	fn := l.p.Funcs[fi]
	fr := &lframe{fn: fn, facts: l.facts(fn), counts: map[string]int{}, args: args, dest: dest}
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
		fr.scopes[0].vars = append(fr.scopes[0].vars, &lvar{name: q.Name, addr: args[i].addr, ds: args[i].ds, param: true})
	}
	c, ret := l.body(fn.Body)
	if c != ctrlReturn {
		l.leave(len(fr.scopes))
		l.exitFn()
	}
	l.frames = l.frames[:len(l.frames)-1]
	if dest != nil {
		return value{ds: dest}
	}
	return value{addr: ret}
}

// exitFn ends the top frame's call: the scopes are already left.
func (l *lowering) exitFn() {
	fr := l.top()
	if l.has(FaultCalleeReleasesBorrowed) {
		for _, a := range fr.args {
			l.note("release of a borrowed argument", l.rt.Release(a.addr))
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
		v := s.vars[i]
		switch {
		case v.param || v.moved:
		case v.ds != nil:
			l.releaseFields(v.name, v.ds)
		case v.slot:
			l.note("release of "+v.name, l.rt.Release(v.addr))
		}
	}
	l.note("scope_exit", l.rt.ScopeExit())
}

// releaseFields drops a destination's references to its fields.
func (l *lowering) releaseFields(name string, d *dstruct) {
	for _, f := range d.fields {
		l.note("release of a field of "+name, l.rt.Release(f))
	}
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
	prev := l.at
	l.at = s
	c, a := l.runStmt(s)
	l.at = prev
	return c, a
}

func (l *lowering) runStmt(s Stmt) (ctrl, traces.Addr) {
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
		v, _ := l.lookup(s.Name)
		old, oldDS := v.addr, v.ds
		a, how := l.expr(s.X, s)
		l.bind(v, a, how, s)
		l.keep(v, s.X)
		if oldDS != nil {
			l.releaseFields("the old "+s.Name, oldDS)
			break
		}
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
		if fr.ifs > 0 && l.has(FaultBreakInIfSkipsCleanup) {
			n = 0 // the bug: the jump out of the if emits no cleanup at all
		}
		l.exits(n)
		return c, 0
	case *Return:
		var a traces.Addr
		if fr.dest != nil {
			l.fill(s.Var)
		} else if s.Var != "" {
			a = l.escape(s.Var, len(fr.scopes), false).addr
		}
		n := len(fr.scopes)
		if l.has(FaultReturnCleansInnermost) {
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

// fill writes the struct name holds into the caller's destination and
// acquires its fields for it, as a struct literal does; the variable
// itself is then released by the scopes' exits as any other. With
// sret-source-kept, the source is kept as if moved into the destination
// (TensorLogic's CLEANUP_NONE), so nothing releases it.
func (l *lowering) fill(name string) {
	fr := l.top()
	v, _ := l.lookup(name)
	d := fr.dest
	fields := l.fields[v.addr]
	if v.ds != nil {
		fields = v.ds.fields
		l.note("read of "+name, l.rt.Read(v.ds.buf, v.ds.size, l.slotName(v.ds)))
	} else {
		l.note("read of "+name, l.rt.Read(v.addr, structSize(len(fields)), ""))
	}
	l.note("write of the destination", l.rt.Write(d.buf, d.size, ""))
	d.fields = slices.Clone(fields)
	for _, f := range fields {
		l.note("acquire of a field into the destination", l.rt.Acquire(f))
	}
	if l.has(FaultSretSourceKept) && !v.param {
		if v.ds == nil && !v.slot {
			l.note("unregister of "+name, l.rt.Unregister(v.addr))
		}
		v.moved = true // the bug: the source's cleanup is dropped, its references kept
	}
}

// destSize is the bytes of the destination of a struct with n fields:
// the struct's size rounded up to the arena's 16-byte unit, which the
// runtime hands out anyway (a slot asked for 8 bytes holds 16, and may
// hand the same buffer out again for 16, which a trace whose buffer
// said 8 would show as an access outside it).
func destSize(n int) uint64 { return (structSize(n) + 15) &^ 15 }

// slotName is the name to access d's slot by: its variable's, from the
// frame that holds it; from any other frame, none.
func (l *lowering) slotName(d *dstruct) string {
	if d.depth == len(l.frames)-1 {
		return d.tmp
	}
	return ""
}

// reserve hands out the slot of the variable at declares (its let) or
// assigns, for a struct of size bytes: the destination a call fills or a
// copy is written to.
func (l *lowering) reserve(at Stmt, size uint64) *dstruct {
	fr := l.top()
	var decl *Let
	switch at := at.(type) {
	case *Let:
		decl = at
	case *Assign:
		v, _ := l.lookup(at.Name)
		decl = v.decl
	}
	k, ok := fr.facts.slots[decl]
	if !ok || k >= len(fr.plan.Slots) {
		panic(fmt.Sprintf("lang: fn %s: a struct variable without a slot (the analysis should have given it one)", fr.fn.Name))
	}
	d := &dstruct{size: size, tmp: fr.facts.names[k], depth: len(l.frames) - 1}
	buf, err := l.rt.ArenaGet(fr.plan.Slots[k], size, d.tmp)
	l.note("arena_get of the destination", err)
	d.buf = buf
	return d
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
//
// A struct held in a destination is copied: its fields acquired now, as
// the exits may release the variable's, and the let that takes the value
// writes it into its own destination (bind).
func (l *lowering) escape(name string, n int, block bool) value {
	fr := l.top()
	v, at := l.lookup(name)
	if v.ds != nil {
		for _, f := range v.ds.fields {
			l.note("acquire of a field of "+name, l.rt.Acquire(f))
		}
		return value{ds: v.ds}
	}
	if at >= len(fr.scopes)-n && !v.param && !v.slot {
		if block && l.has(FaultBlockResultFreed) {
			return value{addr: v.addr} // the bug: the block's exit frees its own result
		}
		l.note("unregister of "+name, l.rt.Unregister(v.addr))
		return value{addr: v.addr}
	}
	l.note("acquire of "+name, l.rt.Acquire(v.addr))
	return value{addr: v.addr}
}

// how says what a value owes before a variable owns it.
type how int

const (
	fresh    how = iota // a count and a record in the top scope
	returned            // a count, no record: a call's result
	escaped             // a count, no record: an if or block expression's value
	borrowed            // neither: another variable's value
	moved               // another variable's value at its last use
	filled              // a struct a call wrote into the variable's destination
)

// bind makes v own val, which came as how says. A struct held in a
// destination is written into v's own (unless the call filled it there),
// and a copy of another variable's acquires its fields again, as the
// copy owns them too (an escaped one acquired them already).
func (l *lowering) bind(v *lvar, val value, h how, at Stmt) {
	v.ds = nil
	if d := val.ds; d != nil {
		v.addr = 0
		if h == filled {
			v.ds = d
			return
		}
		v.ds = l.reserve(at, d.size)
		v.ds.fields = slices.Clone(d.fields)
		l.note("read of the struct copied", l.rt.Read(d.buf, d.size, l.slotName(d)))
		l.note("write of "+v.name, l.rt.Write(v.ds.buf, d.size, v.ds.tmp))
		if h == borrowed {
			for _, f := range d.fields {
				l.note("acquire of a field for "+v.name, l.rt.Acquire(f))
			}
		}
		return
	}
	a := val.addr
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
			if l.has(FaultCallerNoRegister) {
				return
			}
			l.note("register of "+v.name, l.rt.Register(a))
			if l.has(FaultRegisterTwice) {
				l.note("register of "+v.name, l.rt.Register(a))
			}
		}
	case borrowed:
		l.note("acquire for "+v.name, l.rt.Acquire(a))
		if !v.slot {
			l.note("register of "+v.name, l.rt.Register(a))
		}
	case moved:
		if !l.has(FaultMoveStillReleased) {
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
func (l *lowering) expr(x Expr, at Stmt) (value, how) {
	fr := l.top()
	switch x := x.(type) {
	case *Var:
		v, _ := l.lookup(x.Name)
		if fr.facts.moves[at] {
			v.moved = true
			return value{addr: v.addr, ds: v.ds}, moved
		}
		return value{addr: v.addr, ds: v.ds}, borrowed
	case *Op:
		return value{addr: l.op(x)}, fresh
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
		if l.has(FaultEmitRetainOverRetains) {
			for _, f := range fs {
				l.note("emit_retain", l.rt.Acquire(f))
			}
		}
		return value{addr: a}, fresh
	case *Field:
		v, _ := l.lookup(x.Var)
		var fs []traces.Addr
		if v.ds != nil {
			fs = v.ds.fields
			l.note("read of "+x.Var, l.rt.Read(v.ds.buf, v.ds.size, l.slotName(v.ds)))
		} else {
			fs = l.fields[v.addr]
			l.note("read of "+x.Var, l.rt.Read(v.addr, structSize(len(fs)), ""))
		}
		if x.Index >= len(fs) {
			return value{}, borrowed // a struct the runtime refused to make
		}
		return value{addr: fs[x.Index]}, borrowed
	case *Call:
		var dest *dstruct
		if r := l.p.Funcs[x.Func].Result; r != nil && !r.Tensor && len(l.p.Structs[r.Struct].Fields) > 0 {
			// Destination passing: the caller reserves the slot the
			// callee writes the struct into.
			dest = l.reserve(at, destSize(len(l.p.Structs[r.Struct].Fields)))
		}
		args := make([]value, len(x.Args))
		for i, n := range x.Args {
			v, _ := l.lookup(n)
			args[i] = value{addr: v.addr, ds: v.ds}
		}
		if dest != nil {
			return l.call(x.Func, args, dest), filled
		}
		return l.call(x.Func, args, nil), returned
	case *IfExpr:
		body, val := x.Else, x.ElseVal
		if l.cond(x.Cond) {
			body, val = x.Then, x.ThenVal
		}
		return l.blockValue(body, val), escaped
	case *BlockExpr:
		return l.blockValue(x.Body, x.Val), escaped
	}
	return value{}, fresh
}

func (l *lowering) blockValue(body []Stmt, val string) value {
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
