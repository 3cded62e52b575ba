package drive

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/properties/autograd"
)

// session is a layer-5 program and PyTorch's answers to it, as the PyTorch
// driver gave them (PROTOCOL.md shows the same): a leaf saved twice by
// mul, an in-place op on it refused, one under no_grad done, and a
// backward refused as the saved tensor was modified.
var session = []struct{ call, answer string }{
	{`{"op":"leaf","handle":1,"shape":[2],"values":[1,2],"requires_grad":true}`,
		`{"id":0,"events":[{"op":"scope_enter"},{"op":"alloc","addr":"0x10000","size":16},{"op":"unregister","addr":"0x10000"},{"op":"leaf_grad","addr":"0x10000"}],"outcome":"done","tensor":{"shape":[2],"values":[1,2],"requires_grad":true,"is_leaf":true,"grad_fn":null,"version":0}}`},
	{`{"op":"mul","handle":2,"a":1,"b":1}`,
		`{"id":0,"events":[{"op":"save","name":"s0","addr":"0x10000"},{"op":"acquire","addr":"0x10000"},{"op":"save","name":"s1","addr":"0x10000"},{"op":"acquire","addr":"0x10000"},{"op":"alloc","addr":"0x10100","size":16},{"op":"unregister","addr":"0x10100"}],"outcome":"done","tensor":{"shape":[2],"values":[1,4],"requires_grad":true,"is_leaf":false,"grad_fn":"MulBackward0","version":0}}`},
	{`{"op":"sum","handle":3,"a":2}`,
		`{"id":0,"events":[{"op":"alloc","addr":"0x10200","size":8},{"op":"unregister","addr":"0x10200"}],"outcome":"done","tensor":{"shape":[],"values":[5],"requires_grad":true,"is_leaf":false,"grad_fn":"SumBackward0","version":0}}`},
	{`{"op":"add_","target":1,"scalar":1}`,
		`{"id":0,"events":[{"op":"bump","addr":"0x10000"}],"outcome":"refused","message":"a leaf Variable that requires grad is being used in an in-place operation.","kinds":["misuse"]}`},
	{`{"op":"add_","target":1,"scalar":1,"no_grad":true}`,
		`{"id":0,"events":[{"op":"bump","addr":"0x10000","kind":"no_grad"}],"outcome":"done","tensor":{"shape":[2],"values":[2,3],"requires_grad":true,"is_leaf":true,"grad_fn":null,"version":1}}`},
	{`{"op":"backward","target":3,"retain_graph":false}`,
		`{"id":0,"events":[{"op":"unpack","name":"s0"}],"outcome":"refused","message":"one of the variables needed for gradient computation has been modified by an inplace operation","kinds":["saved-modified"],"grads":[]}`},
	{`{"op":"end"}`,
		`{"id":0,"events":[{"op":"release","addr":"0x10100"},{"op":"free","addr":"0x10100"},{"op":"release","addr":"0x10200"},{"op":"free","addr":"0x10200"},{"op":"unsave","name":"s0"},{"op":"release","addr":"0x10000"},{"op":"unsave","name":"s1"},{"op":"release","addr":"0x10000"},{"op":"release","addr":"0x10000"},{"op":"free","addr":"0x10000"},{"op":"scope_exit"},{"op":"end"}],"outcome":"done"}`},
}

// checkSession runs the session's answers, edited by edit (call index ->
// answer line), through the checker of layer-5 programs.
func checkSession(t *testing.T, drop int, edit map[int]string) *Result {
	t.Helper()
	var calls []TensorCall
	var answers []string
	for i, s := range session {
		if i == drop {
			continue
		}
		c, _, _, err := ParseTensorCall([]byte(s.call))
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
		a := s.answer
		if e, ok := edit[i]; ok {
			a = e
		}
		answers = append(answers, a)
	}
	var c checker
	c.start((&Driver{}).header(), nil, calls)
	for i, line := range answers {
		a, err := ParseAnswer([]byte(line))
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		c.answerTensor(i, &a)
	}
	return c.res
}

func TestTensorCheck(t *testing.T) {
	const (
		refusedLeaf = 3
		noGrad      = 4
		backward    = 5
		end         = 6
	)
	for _, tc := range []struct {
		name string
		drop int
		edit map[int]string
		want string // the failure's signature, "" for none
	}{
		{"as PyTorch answered", -1, nil, ""},
		{"a tensor made, not shown", -1, map[int]string{2: `{"id":0,"events":[{"op":"alloc","addr":"0x10200","size":8},{"op":"unregister","addr":"0x10200"}],"outcome":"done"}`}, "record@sum"},
		{"a backward with no grads", -1, map[int]string{backward: `{"id":0,"events":[{"op":"unpack","name":"s0"}],"outcome":"refused","message":"m","kinds":["saved-modified"]}`}, "record@backward"},
		{"a refusal of a leaf's write with no kind", -1, map[int]string{refusedLeaf: `{"id":0,"events":[{"op":"bump","addr":"0x10000"}],"outcome":"refused","message":"m"}`}, "misuse@add_"},
		{"a leaf's write done", -1, map[int]string{refusedLeaf: `{"id":0,"events":[{"op":"bump","addr":"0x10000"}],"outcome":"done","tensor":{"shape":[2],"values":[2,3],"requires_grad":true,"is_leaf":true,"grad_fn":null,"version":1}}`}, "misuse@add_"},
		{"a no_grad write not said so", -1, map[int]string{noGrad: `{"id":0,"events":[{"op":"bump","addr":"0x10000"}],"outcome":"done","tensor":{"shape":[2],"values":[2,3],"requires_grad":true,"is_leaf":true,"grad_fn":null,"version":1}}`}, "misuse@add_"},
		{"a refusal as saved-modified the model does not see", -1, map[int]string{backward: `{"id":0,"events":[],"outcome":"refused","message":"m","kinds":["saved-modified"],"grads":[]}`}, "refusal@backward"},
		{"a backward done that read a modified tensor", -1, map[int]string{backward: `{"id":0,"events":[{"op":"unpack","name":"s0"}],"outcome":"done","grads":[]}`}, "saved-modified@backward"},
		{"a saved tensor never let go", -1, map[int]string{end: `{"id":0,"events":[{"op":"release","addr":"0x10100"},{"op":"free","addr":"0x10100"},{"op":"release","addr":"0x10200"},{"op":"free","addr":"0x10200"},{"op":"release","addr":"0x10000"},{"op":"scope_exit"},{"op":"end"}],"outcome":"done"}`}, "leak@end"},
		// The refused write did not happen: without the no_grad write, the
		// saved tensor is at its version, and a backward reading it is clean.
		{"a refused write changes no version", noGrad, map[int]string{backward: `{"id":0,"events":[{"op":"unpack","name":"s0"},{"op":"unpack","name":"s1"}],"outcome":"done","grads":[{"handle":1,"values":[2,4]}]}`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edit := tc.edit
			if tc.drop >= 0 { // the calls after the one dropped move up
				edit = map[int]string{}
				for i, a := range tc.edit {
					edit[i] = a
				}
			}
			res := checkSession(t, tc.drop, edit)
			got := ""
			if res.Failure != nil {
				got = res.Failure.sig
			}
			if got != tc.want {
				t.Errorf("failure %q (%v), want %q\n%s", got, res.Failure, tc.want, res.Listing())
			}
		})
	}
}

// TestGenerateTensorProgram: drive's generator is the autograd
// language's (properties/autograd tests what it draws), and every call it
// draws is one the protocol's codec writes and reads back.
func TestGenerateTensorProgram(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	other := rand.New(rand.NewPCG(8, 1))
	for range 200 {
		p := GenerateTensorProgram(rng)
		if !slices.EqualFunc(p, tensorCalls(autograd.Generate(other)), sameCall) {
			t.Fatal("GenerateTensorProgram is not autograd.Generate")
		}
		for _, c := range p {
			line := c.AppendJSON(nil)
			back, _, _, err := ParseTensorCall(line)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			if again := back.AppendJSON(nil); string(again) != string(line) {
				t.Fatalf("%s read back as %s", line, again)
			}
		}
	}
}

func listCalls(calls []TensorCall) string {
	var b strings.Builder
	for _, c := range calls {
		b.Write(c.AppendJSON(nil))
		b.WriteByte('\n')
	}
	return b.String()
}
