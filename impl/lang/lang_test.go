package lang

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// sample is a program that uses every construct.
func sample() *Program {
	tensor := Type{Tensor: true}
	pair := Type{Struct: 0}
	return &Program{
		Structs: []StructDef{{Name: "Pair", Fields: []string{"f0", "f1"}}, {Name: "Unit"}},
		Funcs: []*Func{
			{Name: "main", Body: []Stmt{
				&Let{"a", &Op{Size: 16}},
				&Let{"b", &Op{Args: []string{"a"}}},
				&Let{"p", &StructLit{Type: 0, Fields: []string{"a", "b"}}},
				&Let{"u", &StructLit{Type: 1}},
				&Let{"c", &Call{Func: 1, Args: []string{"a", "p"}}},
				&Let{"q", &Call{Func: 2, Args: []string{"p", "c"}}},
				&Loop{Counter: "i0", N: 3, Body: []Stmt{
					&Let{"t", &Op{Args: []string{"c"}}},
					&Assign{"b", &Var{"t"}},
					&If{Cond: Cond{Counter: "i0", K: 1}, Then: []Stmt{&Let{"z", &Op{Size: 32}}, &Continue{}}},
					&If{Cond: Cond{Counter: "i0", K: 2}, Then: []Stmt{&Break{}}},
					&Let{"s", &StructLit{Type: 0, Fields: []string{"t", "c"}}},
				}},
				&Let{"x", &IfExpr{Cond: Cond{K: 1}, Then: []Stmt{&Let{"y", &Op{Size: 16}}}, ThenVal: "y", Else: nil, ElseVal: "a"}},
				&Let{"w", &BlockExpr{Body: []Stmt{&Let{"v", &Field{Var: "q", Index: 1}}}, Val: "v"}},
				&Let{"a", &Var{"w"}},
				&Block{Body: []Stmt{&Let{"k", &Var{"x"}}}},
				&Let{"u2", &Var{"u"}},
			}},
			{Name: "f", Params: []Param{{"a", tensor}, {"p", pair}}, Result: &tensor, Body: []Stmt{
				&Let{"t", &Op{Args: []string{"a"}}},
				&If{Cond: Cond{K: 1}, Then: []Stmt{&Let{"r", &Op{Size: 8}}, &Return{"r"}}},
				&Return{"t"},
			}},
			{Name: "mk", Method: true, Params: []Param{{"self", pair}, {"c", tensor}}, Result: &pair, Body: []Stmt{
				&Let{"g", &Field{Var: "self", Index: 0}},
				&Let{"n", &StructLit{Type: 0, Fields: []string{"g", "c"}}},
				&Return{"n"},
			}},
		},
	}
}

func TestSampleAgrees(t *testing.T) {
	p := sample()
	want, err := Interpret(p)
	if err != nil {
		t.Fatal(err)
	}
	var rec impl.Recording
	rt := impl.New(impl.Config{Record: rec.Record})
	got, err := Lower(p, rt)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + p.String())
	if len(got.Errors) > 0 {
		t.Errorf("runtime errors: %v", got.Errors)
	}
	if fmt.Sprint(got.Alive) != fmt.Sprint(want) {
		t.Errorf("alive:\n lowered %v\n meant   %v", got.Alive, want)
	}
	if n := len(rt.State().Objects); n != 0 {
		t.Errorf("%d objects left at the end", n)
	}
}

func TestGeneratedAgree(t *testing.T) {
	r := uint64(1)
	for i := range 3000 {
		data := make([]byte, 10+i%200)
		for j := range data {
			r = r*6364136223846793005 + 1442695040888963407
			data[j] = byte(r >> 56)
		}
		p := Generate(Bytes(data))
		if err := Check(p); err != nil {
			t.Fatalf("program %d ill-formed: %v\n%s", i, err, p)
		}
		want, err := Interpret(p)
		if err != nil {
			t.Fatal(err)
		}
		rt := impl.New(impl.Config{})
		got, err := Lower(p, rt)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Errors) > 0 || fmt.Sprint(got.Alive) != fmt.Sprint(want) || len(rt.State().Objects) != 0 {
			t.Fatalf("program %d: errors %v\nalive:\n lowered %v\n meant   %v\n%s", i, got.Errors, got.Alive, want, p)
		}
	}
}

// TestStructReturnByDestination: a struct comes back by destination
// passing. The caller reserves its variable's slot before the call; the
// callee writes the struct into it and acquires the field, and neither
// side unregisters or registers a struct; the struct the callee made dies
// at its exit, the field lives on in the destination until main's end.
func TestStructReturnByDestination(t *testing.T) {
	box := Type{Struct: 1}
	p := mainOnly([]Stmt{&Let{"x", &Call{Func: 1}}, &Let{"y", &Field{Var: "x"}}},
		&Func{Name: "f", Result: &box, Body: []Stmt{
			&Let{"t", &Op{Size: 16}},
			&Let{"b", &StructLit{Type: 1, Fields: []string{"t"}}},
			&Return{"b"},
		}})
	if d := run(t, p); d != "" {
		t.Fatalf("the lowering differs from the program: %s\n%s", d, p)
	}
	var rec impl.Recording
	if _, err := Lower(p, impl.New(impl.Config{Record: rec.Record})); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, ev := range rec.Events() {
		s := ev.Op.String()
		if ev.Op == traces.OpArenaGet {
			s += " " + ev.Var
		}
		ops = append(ops, s)
	}
	got := strings.Join(ops, ", ")
	// main: fn_enter, scope_enter, the destination; then f's frame.
	if want := "fn_enter, scope_enter, arena_get x, fn_enter, "; !strings.HasPrefix(got, want) {
		t.Errorf("the destination is not reserved before the call:\n%s", got)
	}
	// f's return: read b, write the destination, acquire t; its exit
	// frees b (and drops its count of t): no unregister anywhere, and
	// the only register is y's, of the field.
	if want := "struct_init, read, write, acquire, scope_exit, free, fn_exit"; !strings.Contains(got, want) {
		t.Errorf("the return is not a copy into the destination (want %q):\n%s", want, got)
	}
	if n := strings.Count(got, "unregister"); n != 0 {
		t.Errorf("%d unregisters:\n%s", n, got)
	}
	if n := strings.Count(got, "register"); n != 1 {
		t.Errorf("%d registers, want y's alone:\n%s", n, got)
	}
}
