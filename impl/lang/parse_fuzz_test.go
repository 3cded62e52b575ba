package lang

// FuzzParse lives alone in its file: OSS-Fuzz's libFuzzer build
// (.clusterfuzzlite/build.sh) compiles a target's file with the package's
// non-test files only.

import "testing"

// FuzzParse: no input makes Parse panic, and what it accepts prints as
// source it parses again to the same program.
func FuzzParse(f *testing.F) {
	f.Add("struct Box { f0: Tensor }\nfn main() {\n    let a = zeros(16);\n    let b = Box { f0: a };\n    let c = b.f1(&a);\n    let d = if true {\n        a\n    } else {\n        let e = b.f0;\n        e\n    };\n}\nimpl Box fn f1(&self, x: &Tensor) -> Tensor {\n    return x;\n}\n")
	f.Add("fn main() { let a = zeros(16); for i in 0..2 { let b = add(a); } }")
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Parse(src)
		if err != nil {
			return
		}
		again, err := Parse(p.String())
		if err != nil {
			t.Fatalf("the printed program does not parse: %v\n%s", err, p)
		}
		if again.String() != p.String() {
			t.Fatalf("printed twice differently:\n%s\n%s", p, again)
		}
	})
}
