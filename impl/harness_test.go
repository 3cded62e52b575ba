package impl_test

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// A script is a small program, one call a line, whose operands are named
// variables, so tables can state programs and their traces without
// addresses:
//
//	enter | exit | end
//	a=alloc 64 | s=struct 32 a null | acquire a | release a
//	register a | unregister a | param w a | unparam w
//	fn 2 | method 2 | fnexit | x=get 0 16 | read x | write x
//	plan 0-1 1-1 (FnEnter with the planned size) | x=get @1 16 (variable 1's planned slot)
//
// An operand is a variable, "null" or a literal address ("0x1234"). A line
// may end in "!kind[,kind...]": the violation kinds the call must return,
// in order; a line without one must return nil.
type script []string

// run is one script run on one runtime: what each call returned, the
// trace it recorded (addresses written as the variables bound to them)
// and the State after every call.
type run struct {
	t      *testing.T
	rt     *impl.Runtime
	rec    impl.Recording
	vars   map[string]traces.Addr
	sizes  map[string]uint64 // arena variables' sizes, for their reads
	plan   impl.Plan
	latest map[traces.Addr]string // the variable bound last to each address
	first  map[traces.Addr]string // the variable bound first to each address: arena addresses are written so
	trace  []string
	kinds  [][]traces.Kind
	states []traces.State
}

// execute runs s on a runtime configured by cfg (its recorder is set
// here). With check, it fails the test where a call's errors differ from
// the line's "!kinds".
func execute(t *testing.T, cfg impl.Config, check bool, s script) *run {
	t.Helper()
	r := &run{t: t, vars: map[string]traces.Addr{}, sizes: map[string]uint64{}, latest: map[traces.Addr]string{}, first: map[traces.Addr]string{}}
	cfg.Record = r.rec.Record
	r.rt = impl.New(cfg)
	for i, line := range s {
		call, want, _ := strings.Cut(line, " !")
		seen := len(r.rec.Events())
		op, err := r.step(call)
		got := kindsOf(t, op, err)
		r.kinds = append(r.kinds, got)
		if check && fmt.Sprint(got) != fmt.Sprint(parseKinds(want)) {
			t.Errorf("line %d %q: errors %v (%v), want %v", i, call, got, err, parseKinds(want))
		}
		for _, ev := range r.rec.Events()[seen:] {
			r.trace = append(r.trace, r.render(ev))
		}
		r.states = append(r.states, r.rt.State())
	}
	return r
}

func parseKinds(s string) []traces.Kind {
	var ks []traces.Kind
	for _, k := range strings.Split(s, ",") {
		if k != "" {
			ks = append(ks, traces.Kind(k))
		}
	}
	return ks
}

// kindsOf lists the kinds of the *Errors in err, checking that each
// names the call that returned it.
func kindsOf(t *testing.T, op traces.Op, err error) []traces.Kind {
	t.Helper()
	if err == nil {
		return nil
	}
	list := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	var ks []traces.Kind
	for _, e := range list {
		var ie *impl.Error
		if !errors.As(e, &ie) {
			t.Fatalf("%v: error %v is not an *impl.Error", op, e)
		}
		if ie.Op != op {
			t.Errorf("error %v names op %v, want %v", ie, ie.Op, op)
		}
		ks = append(ks, ie.Kind)
	}
	return ks
}

func (r *run) step(call string) (traces.Op, error) {
	r.t.Helper()
	bind, call, assign := strings.Cut(call, "=")
	if !assign {
		call, bind = bind, ""
	}
	f := strings.Fields(call)
	switch f[0] {
	case "enter":
		return traces.OpScopeEnter, r.rt.ScopeEnter()
	case "exit":
		return traces.OpScopeExit, r.rt.ScopeExit()
	case "end":
		return traces.OpEnd, r.rt.End()
	case "alloc":
		a, err := r.rt.Alloc(r.size(f[1]))
		r.bind(bind, a)
		return traces.OpAlloc, err
	case "struct":
		var fields []traces.Addr
		for _, v := range f[2:] {
			fields = append(fields, r.addr(v))
		}
		a, err := r.rt.StructInit(r.size(f[1]), fields)
		r.bind(bind, a)
		return traces.OpStructInit, err
	case "acquire":
		return traces.OpAcquire, r.rt.Acquire(r.addr(f[1]))
	case "release":
		return traces.OpRelease, r.rt.Release(r.addr(f[1]))
	case "register":
		return traces.OpRegister, r.rt.Register(r.addr(f[1]))
	case "unregister":
		return traces.OpUnregister, r.rt.Unregister(r.addr(f[1]))
	case "param":
		return traces.OpParamRegister, r.rt.ParamRegister(f[1], r.addr(f[2]))
	case "unparam":
		return traces.OpParamRelease, r.rt.ParamRelease(f[1])
	case "fn":
		return traces.OpFnEnter, r.rt.FnEnter(int(r.size(f[1])))
	case "method":
		return traces.OpFnEnter, r.rt.MethodEnter(int(r.size(f[1])))
	case "plan":
		var lives []impl.Interval
		for _, iv := range f[1:] {
			var l impl.Interval
			if _, err := fmt.Sscanf(iv, "%d-%d", &l.First, &l.Last); err != nil {
				r.t.Fatalf("bad interval %q", iv)
			}
			lives = append(lives, l)
		}
		var err error
		if r.plan, err = r.rt.PlanFrame(lives); err != nil {
			r.t.Fatal(err)
		}
		return traces.OpFnEnter, r.rt.FnEnter(r.plan.Size)
	case "fnexit":
		return traces.OpFnExit, r.rt.FnExit()
	case "get":
		slot := 0
		if v, ok := strings.CutPrefix(f[1], "@"); ok {
			slot = r.plan.Slots[r.size(v)]
		} else {
			slot = int(r.size(f[1]))
		}
		a, err := r.rt.ArenaGet(slot, r.size(f[2]), bind)
		r.bind(bind, a)
		r.sizes[bind] = r.size(f[2])
		return traces.OpArenaGet, err
	case "read":
		return traces.OpRead, r.rt.Read(r.addr(f[1]), r.sizes[f[1]], f[1])
	case "write":
		return traces.OpWrite, r.rt.Write(r.addr(f[1]), r.sizes[f[1]], f[1])
	}
	r.t.Fatalf("bad script line %q", call)
	return 0, nil
}

func (r *run) size(s string) uint64 {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		r.t.Fatalf("bad size %q", s)
	}
	return n
}

func (r *run) addr(v string) traces.Addr {
	if v == "null" {
		return 0
	}
	if strings.HasPrefix(v, "0x") {
		a, err := traces.ParseAddr(v)
		if err != nil {
			r.t.Fatalf("bad address %q", v)
		}
		return a
	}
	a, ok := r.vars[v]
	if !ok {
		r.t.Fatalf("unbound variable %q", v)
	}
	return a
}

func (r *run) bind(v string, a traces.Addr) {
	r.vars[v] = a
	if a != 0 {
		r.latest[a] = v
		if _, ok := r.first[a]; !ok {
			r.first[a] = v
		}
	}
}

// name writes a as the variable most recently bound to it.
func (r *run) name(a traces.Addr) string {
	if a == 0 {
		return "null"
	}
	if v, ok := r.latest[a]; ok {
		return v
	}
	return a.String()
}

// firstName writes a as the variable bound first to it: an arena
// buffer's address keeps the name of the variable it was made for, so a
// trace shows which variables share a buffer.
func (r *run) firstName(a traces.Addr) string {
	if v, ok := r.first[a]; ok {
		return v
	}
	return r.name(a)
}

// render writes ev as "alloc a 64", "struct_init s 32 [a null]",
// "param_register w a", "free a".
func (r *run) render(ev traces.Event) string {
	s := ev.Op.String()
	switch ev.Op {
	case traces.OpAlloc:
		s += fmt.Sprintf(" %s %d", r.name(ev.Addr), ev.Size)
	case traces.OpStructInit:
		names := make([]string, len(ev.Fields))
		for i, f := range ev.Fields {
			names[i] = r.name(f)
		}
		s += fmt.Sprintf(" %s %d [%s]", r.name(ev.Addr), ev.Size, strings.Join(names, " "))
	case traces.OpAcquire, traces.OpRelease, traces.OpRegister, traces.OpUnregister, traces.OpFree:
		s += " " + r.name(ev.Addr)
	case traces.OpParamRegister:
		s += " " + ev.Name + " " + r.name(ev.Addr)
	case traces.OpParamRelease:
		s += " " + ev.Name
	case traces.OpFnEnter:
		s += fmt.Sprintf(" %d", ev.Slots)
	case traces.OpArenaGet:
		s += fmt.Sprintf(" %d %d %s@%s", ev.Slot, ev.Size, ev.Var, r.firstName(ev.Addr))
	case traces.OpRead, traces.OpWrite:
		s += " " + ev.Var + "@" + r.firstName(ev.Addr)
	}
	return s
}

// Trace returns the rendered trace, events joined by "; ".
func (r *run) Trace() string { return strings.Join(r.trace, "; ") }

// State renders the final State with variable names: "objects a:1 s:2 |
// scopes [a] [] | params w:a".
func (r *run) State() string { return r.renderState(r.rt.State()) }

func (r *run) renderState(st traces.State) string {
	var objs []string
	for a, n := range st.Objects {
		objs = append(objs, fmt.Sprintf("%s:%d", r.name(a), n))
	}
	sort.Strings(objs)
	var scopes []string
	for _, recs := range st.Scopes {
		names := make([]string, len(recs))
		for i, a := range recs {
			names[i] = r.name(a)
		}
		scopes = append(scopes, "["+strings.Join(names, " ")+"]")
	}
	var params []string
	for n, a := range st.Params {
		params = append(params, n+":"+r.name(a))
	}
	sort.Strings(params)
	return fmt.Sprintf("objects %s | scopes %s | params %s",
		strings.Join(objs, " "), strings.Join(scopes, " "), strings.Join(params, " "))
}
