package lang

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseRoundTrip: every generated program, printed and parsed back,
// prints the same and means the same: a saved counterexample is the
// program that failed.
func TestParseRoundTrip(t *testing.T) {
	progs := []*Program{sample()}
	r := uint64(7)
	for i := range 2000 {
		data := make([]byte, 10+i%200)
		for j := range data {
			r = r*6364136223846793005 + 1442695040888963407
			data[j] = byte(r >> 56)
		}
		progs = append(progs, Generate(Bytes(data)))
	}
	for i, p := range progs {
		src := p.String()
		q, err := Parse(src)
		if err != nil {
			t.Fatalf("program %d: %v\n%s", i, err, src)
		}
		if got := q.String(); got != src {
			t.Fatalf("program %d prints differently after a round trip:\n%s\nwant:\n%s", i, got, src)
		}
		want, err := Interpret(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Interpret(q)
		if err != nil {
			t.Fatalf("program %d, parsed: %v\n%s", i, err, src)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("program %d means %v parsed, %v generated\n%s", i, got, want, src)
		}
	}
}

// TestParseComments: a // comment runs to the end of its line, wherever
// it is, so a saved counterexample can say how it was found.
func TestParseComments(t *testing.T) {
	p, err := Parse("// found by tlcheck fuzz --source\nfn main() { // main\n    let a = zeros(16); // a tensor\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.String(), "fn main() {\n    let a = zeros(16);\n}\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestParseErrors: bad source is an error naming its line and column and
// what was wrong, never a panic.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"", "line 1, column 1: no function"},
		{"fn main() {", `line 1, column 12: want a statement, found the end of the file`},
		{"fn main() {\n  let a = zeros(16)\n}", `line 3, column 1: want ";", found "}"`},
		{"fn main() { let a = zeros(-1); }", `unexpected character`},
		{"fn main() { let a = zeros(x); }", `column 27: want a non-negative integer, found "x"`},
		{"fn main() { let a = f1(&b); }", `column 21: no function f1`},
		{"fn main() { let a = Pair {}; }", `no struct Pair`},
		{"struct Box { f0: Tensor }\nfn main() { let a = Box { g: b }; }", `line 2, column 27: struct Box has no field g`},
		{"struct Box { f0: Tensor }\nfn main() { let a = Box {}; }", `struct Box has 1 fields: 0 given`},
		{"fn main() { let a = b.x; }", `a field is named by its index`},
		{"fn main() { let a = { }; }", `want the name of the block's value`},
		{"fn main() { let a = if true { a } ; }", `want "else"`},
		{"fn main() {}\nfn main() {}", `line 2, column 4: fn main is declared twice`},
		{"fn main() {}\nfn zeros() -> Tensor { return x; }", `is an operation's name`},
		{"fn main() {}\nfn f(&self) -> Tensor { return x; }", `&self is a method's first parameter`},
		{"fn main() {}\nfn f(a: &Pair) -> Tensor { return a; }", `line 2, column 10: no type "Pair"`},
		{"fn main() { for i in 1..2 {} }", `want "0", found "1"`},
		{"fn main() { a b; }", `want a statement, found "a"`},
		{"let", `want struct, fn or impl, found "let"`},
		{"struct S {}\nstruct S {}", `line 2, column 8: struct S is declared twice`},
		{"fn main() { let a = zeros(16) $ }", `line 1, column 31: unexpected character '$'`},
	} {
		_, err := Parse(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", c.src, err, c.want)
		}
	}
}
