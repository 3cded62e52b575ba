package lang

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

var tensor = Type{Tensor: true}

// mainOnly is a program of main with body, and the functions after it.
func mainOnly(body []Stmt, funcs ...*Func) *Program {
	return &Program{Structs: genStructs, Funcs: append([]*Func{{Name: "main", Body: body}}, funcs...)}
}

// mk is `fn name() -> Tensor { let t = zeros(16); return t; }`.
func mk(name string) *Func {
	return &Func{Name: name, Result: &tensor, Body: []Stmt{&Let{"t", &Op{Size: 16}}, &Return{"t"}}}
}

// codegenTriggers is, for every codegen fault, a program whose lowering
// the fault changes (its Trigger, as a program).
var codegenTriggers = map[impl.Fault]*Program{
	impl.FaultReturnCleansInnermost: mainOnly([]Stmt{&Let{"r", &Call{Func: 1}}},
		&Func{Name: "f", Result: &tensor, Body: []Stmt{
			&Let{"a", &Op{Size: 16}},
			&Block{Body: []Stmt{&Let{"b", &Op{Size: 16}}, &Return{"b"}}},
			&Return{"a"},
		}}),
	impl.FaultBreakInIfSkipsCleanup: mainOnly([]Stmt{&Loop{Counter: "i0", N: 2, Body: []Stmt{
		&Let{"a", &Op{Size: 16}},
		&If{Cond: Cond{Counter: "i0"}, Then: []Stmt{&Break{}}},
	}}}),
	impl.FaultBlockResultFreed: mainOnly([]Stmt{&Let{"x", &BlockExpr{Body: []Stmt{&Let{"t", &Op{Size: 16}}}, Val: "t"}}}),
	impl.FaultCallerNoRegister: mainOnly([]Stmt{&Block{Body: []Stmt{&Let{"x", &Call{Func: 1}}}}}, mk("f")),
	impl.FaultCalleeReleasesBorrowed: mainOnly([]Stmt{&Let{"a", &Op{Size: 16}}, &Let{"b", &Call{Func: 1, Args: []string{"a"}}}},
		&Func{Name: "f", Params: []Param{{"p", tensor}}, Result: &tensor, Body: []Stmt{&Let{"t", &Op{Size: 16}}, &Return{"t"}}}),
	impl.FaultRegisterTwice: mainOnly([]Stmt{&Let{"x", &BlockExpr{Body: []Stmt{&Let{"y", &Call{Func: 1}}}, Val: "y"}}}, mk("f")),
	impl.FaultMoveStillReleased: mainOnly([]Stmt{&Let{"x", &BlockExpr{Body: []Stmt{
		&Let{"a", &Op{Size: 16}}, &Let{"b", &Var{"a"}}}, Val: "b"}}}),
	impl.FaultEmitRetainOverRetains: mainOnly([]Stmt{&Loop{Counter: "i0", N: 2, Body: []Stmt{
		&Let{"t", &Op{Size: 16}}, &Let{"s", &StructLit{Type: 1, Fields: []string{"t"}}},
	}}}),
	impl.FaultLoopLifeEndsFirstLoop: mainOnly([]Stmt{
		&Let{"a", &Op{Size: 32}},
		&Loop{Counter: "i0", N: 1, Body: []Stmt{&Let{"b", &Var{"a"}}}},
		&Loop{Counter: "i0", N: 2, Body: []Stmt{&Let{"c", &Op{Args: []string{"a"}}}, &Let{"d", &Op{Size: 32}}}},
	}),
	impl.FaultSretSourceKept: mainOnly([]Stmt{&Let{"x", &Call{Func: 1}}},
		&Func{Name: "f", Result: &Type{Struct: 1}, Body: []Stmt{
			&Let{"t", &Op{Size: 16}},
			&Let{"b", &StructLit{Type: 1, Fields: []string{"t"}}},
			&Return{"b"},
		}}),
}

// run lowers p on a runtime with faults and says how it differs from the
// program's meaning: "" if it does not.
func run(t *testing.T, p *Program, faults ...impl.Fault) string {
	t.Helper()
	want, err := Interpret(p)
	if err != nil {
		t.Fatalf("%v\n%s", err, p)
	}
	var rec impl.Recording
	rt := impl.New(impl.Config{Faults: faults, Record: rec.Record})
	got, err := Lower(p, rt)
	if err != nil {
		t.Fatal(err)
	}
	var diffs []string
	if s := staleSlotReads(rec.Events()); s != "" {
		diffs = append(diffs, s)
	}
	if len(got.Errors) > 0 {
		diffs = append(diffs, fmt.Sprint("runtime errors: ", got.Errors))
	}
	if fmt.Sprint(got.Alive) != fmt.Sprint(want) {
		diffs = append(diffs, fmt.Sprintf("alive: lowered %v, meant %v", got.Alive, want))
	}
	if n := len(rt.State().Objects); n > 0 {
		diffs = append(diffs, fmt.Sprintf("%d objects alive at the end", n))
	}
	return strings.Join(diffs, "; ")
}

// staleSlotReads names the first read of a variable through an arena
// buffer that another variable's arena_get took since: the model's
// stale-reuse, in the small, so that a slot plan's fault shows here
// without the model (which this package may not import).
func staleSlotReads(evs []traces.Event) string {
	holder := map[traces.Addr]string{}
	for i, ev := range evs {
		switch {
		case ev.Op == traces.OpArenaGet:
			holder[ev.Addr] = ev.Var
		case ev.Op == traces.OpRead && ev.Var != "":
			if h, ok := holder[ev.Addr]; ok && h != ev.Var {
				return fmt.Sprintf("event %d reads %s through a slot %s holds", i, ev.Var, h)
			}
		}
	}
	return ""
}

// TestCodegenFaultsShow: each codegen fault's trigger runs clean without
// the fault and shows with it, in the live objects or the runtime's
// errors.
func TestCodegenFaultsShow(t *testing.T) {
	n := 0
	for _, fi := range impl.Catalog() {
		if fi.Engine != impl.EngineSource {
			continue
		}
		n++
		t.Run(string(fi.Name), func(t *testing.T) {
			p, ok := codegenTriggers[fi.Name]
			if !ok {
				t.Fatalf("no trigger program for %s", fi.Name)
			}
			if d := run(t, p); d != "" {
				t.Fatalf("correct lowering differs: %s\n%s", d, p)
			}
			d := run(t, p, fi.Name)
			if d == "" {
				t.Fatalf("fault does not show:\n%s", p)
			}
			t.Logf("shows: %s", d)
		})
	}
	if n != len(codegenTriggers) {
		t.Errorf("%d codegen faults, %d trigger programs", n, len(codegenTriggers))
	}
}

// TestCheck: ill-formed programs are errors that name the place.
func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    *Program
		want string
	}{
		{"no main", &Program{}, "no main"},
		{"unbound", mainOnly([]Stmt{&Let{"x", &Var{"y"}}}), "fn main: statement 0: variable y is not in scope"},
		{"break outside loop", mainOnly([]Stmt{&Break{}}), "break or continue outside a loop"},
		{"call backwards", mainOnly([]Stmt{&Let{"x", &Call{Func: 0}}}), "calls only those after it"},
		{"no return", mainOnly(nil, &Func{Name: "f", Result: &tensor}), "fn f: the body must end with return"},
		{"field of a tensor", mainOnly([]Stmt{&Let{"a", &Op{Size: 16}}, &Let{"b", &Field{Var: "a"}}}), "statement 1: a has no field 0"},
		{"assign a parameter", mainOnly(nil, &Func{Name: "f", Params: []Param{{"p", tensor}}, Result: &tensor,
			Body: []Stmt{&Assign{"p", &Op{Size: 16}}, &Return{"p"}}}), "parameter p is borrowed"},
		{"too long a loop", mainOnly([]Stmt{&Loop{Counter: "i", N: MaxLoop + 1}}), "a loop of 5 iterations"},
		{"zeros(0)", mainOnly([]Stmt{&Let{"a", &Op{}}}), "zeros(0)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.p)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check = %v, want an error containing %q", err, tt.want)
			}
			if _, err := Interpret(tt.p); err == nil {
				t.Error("Interpret ran an ill-formed program")
			}
			if _, err := Lower(tt.p, impl.New(impl.Config{})); err == nil {
				t.Error("Lower ran an ill-formed program")
			}
		})
	}
}

// TestShrinkKeepsFailing: the shrinker returns a program that still fails
// and is no larger.
func TestShrinkKeepsFailing(t *testing.T) {
	p := sample()
	fails := func(q *Program) bool { return run(t, q, impl.FaultBlockResultFreed) != "" }
	if !fails(p) {
		t.Fatal("the sample does not fail with block-result-freed")
	}
	small := Shrink(p, fails)
	if !fails(small) || Statements(small) >= Statements(p) {
		t.Errorf("shrunk %d statements to %d:\n%s", Statements(p), Statements(small), small)
	}
	t.Logf("shrunk %d statements to %d:\n%s", Statements(p), Statements(small), small)
}
