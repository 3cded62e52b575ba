package lang_test

import (
	"fmt"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/lang"
)

// A block expression's value escapes the block: the interpreter and the
// lowered run agree on what is alive after each statement. With the
// block-result-freed fault, the block's exit frees the value first.
func Example() {
	p := &lang.Program{Funcs: []*lang.Func{{Name: "main", Body: []lang.Stmt{
		&lang.Let{Name: "x", X: &lang.BlockExpr{
			Body: []lang.Stmt{&lang.Let{Name: "t", X: &lang.Op{Size: 16}}},
			Val:  "t",
		}},
		&lang.Let{Name: "y", X: &lang.Op{Args: []string{"x"}}},
	}}}}
	fmt.Print(p)
	meant, _ := lang.Interpret(p)
	fmt.Println("interpreter:", meant)
	for _, faults := range [][]impl.Fault{nil, {lang.FaultBlockResultFreed}} {
		got, _ := lang.Lower(p, impl.New(impl.Config{Faults: faults}))
		fmt.Println("lowered", faults, got.Alive, len(got.Errors), "runtime errors")
	}
	// Output:
	// fn main() {
	//     let x = {
	//         let t = zeros(16);
	//         t
	//     };
	//     let y = add(x);
	// }
	// interpreter: [[0] [0] [0 1]]
	// lowered [] [[0] [0] [0 1]] 0 runtime errors
	// lowered [block-result-freed] [[0] [] [1]] 1 runtime errors
}
