package lang

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
)

// TestCapacity checks that a program the runtime has no room for is
// refused as input, naming where, and never lowered into a run whose
// failed allocations read as runtime bugs ("write of NULL").
func TestCapacity(t *testing.T) {
	tests := []struct {
		name string
		src  string
		oom  bool   // refused by Lower (the tensors together), not by Parse
		want string // in the error
	}{
		{"one tensor over the arena",
			fmt.Sprintf("fn main() {\n    let a = zeros(%d);\n}\n", MaxTensor+1),
			false, "line 2, column 19: zeros(251658241): larger than 251658240 bytes"},
		{"tensors that fit one by one, not together",
			"fn main() {\n    let a = zeros(200000000);\n    let b = zeros(200000000);\n    let c = add(a, b);\n}\n",
			true, "fn main, statement (let b = zeros(200000000);): the runtime has no room"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.src)
			if !tt.oom {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Parse: %v, want an error with %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = Lower(p, impl.New(impl.Config{}))
			if !errors.Is(err, impl.ErrOutOfMemory) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Lower: %v, want ErrOutOfMemory naming %q", err, tt.want)
			}
		})
	}
	// The limit is the language's too: a program built without the
	// parser is refused by Check.
	p := &Program{Funcs: []*Func{{Name: "main", Body: []Stmt{&Let{"a", &Op{Size: MaxTensor + 1}}}}}}
	if err := Check(p); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Check: %v", err)
	}
	// At the limit, a tensor is lowered.
	p.Funcs[0].Body[0].(*Let).X.(*Op).Size = MaxTensor
	if got, err := Lower(p, impl.New(impl.Config{})); err != nil || len(got.Errors) > 0 {
		t.Errorf("a tensor of MaxTensor bytes: %v %v", err, got)
	}
}
