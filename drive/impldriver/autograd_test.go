package impldriver_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/drive/impldriver"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
	"github.com/tlcheck/tlcheck/traces"
)

// TestServeAutograd runs a layer-5 program and holds its answers, events
// left out, to what PyTorch 1.13 answered to the same calls (recorded
// once from examples/torchdriver): the program whose view's
// gradient flows through its base's in-place op, then refusals, an
// infinite number and a drop.
func TestServeAutograd(t *testing.T) {
	in := `{"id":1,"op":"reset"}
{"id":2,"op":"leaf","handle":1,"shape":[3],"values":[1,2,3],"requires_grad":true}
{"id":3,"op":"mul","handle":2,"a":1,"b":1}
{"id":4,"op":"slice","handle":3,"a":2,"start":0,"stop":2}
{"id":5,"op":"detach","handle":4,"a":2}
{"id":6,"op":"mul_","target":2,"scalar":3}
{"id":7,"op":"sum","handle":5,"a":3}
{"id":8,"op":"backward","target":5,"retain_graph":false}
{"id":9,"op":"retain_grad","target":4}
{"id":10,"op":"add_","target":1,"b":1}
{"id":11,"op":"div_","target":4,"scalar":"inf","no_grad":true}
{"id":12,"op":"drop","target":3}
{"id":13,"op":"end"}
`
	want := `{"protocol":"tlcheck-drive","version":1,"layers":[5],"source":"tlcheck impl/autograd (Go) over tlcheck-drive, lifetime pytorch","notes":["matmul is torch.mm, of two matrices: a vector operand is refused (\"self must be a matrix\", \"mat2 must be a matrix\"), where PyTorch's @ takes it","a view made under no_grad whose base was then written in place is answered as the engine sees it (a leaf); PyTorch refuses to tell its grad_fn (\"\u003cerror: A view was created in no_grad mode and its base ...\u003e\")"],"departures":[{"name":"matmul-matrices-only","op":"matmul","message":"must be a matrix","note":"matmul is torch.mm: an operand that is not a matrix is refused so"},{"name":"no-grad-view-stale","field":"tensor","other":"A view was created in no_grad mode and its base or another view of its base has been modified inplace","note":"a stale view made under no_grad: the engine answers its tensor, PyTorch refuses to tell its grad_fn"}]}
{"id":1,"events":[],"outcome":"done"}
{"id":2,"outcome":"done","tensor":{"shape":[3],"values":[1,2,3],"requires_grad":true,"is_leaf":true,"grad_fn":null,"version":0}}
{"id":3,"outcome":"done","tensor":{"shape":[3],"values":[1,4,9],"requires_grad":true,"is_leaf":false,"grad_fn":"MulBackward0","version":0}}
{"id":4,"outcome":"done","tensor":{"shape":[2],"values":[1,4],"requires_grad":true,"is_leaf":false,"grad_fn":"SliceBackward0","version":0}}
{"id":5,"outcome":"done","tensor":{"shape":[3],"values":[1,4,9],"requires_grad":false,"is_leaf":true,"grad_fn":null,"version":0}}
{"id":6,"outcome":"done","tensor":{"shape":[3],"values":[3,12,27],"requires_grad":true,"is_leaf":false,"grad_fn":"MulBackward0","version":1}}
{"id":7,"outcome":"done","tensor":{"shape":[],"values":[15],"requires_grad":true,"is_leaf":false,"grad_fn":"SumBackward0","version":0}}
{"id":8,"outcome":"done","grads":[{"handle":1,"values":[6,12,0]}]}
{"id":9,"events":[],"outcome":"refused","message":"can't retain_grad on Tensor that has requires_grad=False"}
{"id":10,"events":[],"outcome":"refused","message":"a leaf Variable that requires grad is being used in an in-place operation."}
{"id":11,"outcome":"done","tensor":{"shape":[3],"values":[0,0,0],"requires_grad":false,"is_leaf":true,"grad_fn":null,"version":2}}
{"id":12,"outcome":"done"}
{"id":13,"outcome":"done"}
`
	var out bytes.Buffer
	cfg := autograd.Config{Lifetime: autograd.LifetimePyTorch}
	if err := impldriver.ServeAutograd(strings.NewReader(in), &out, impl.Config{}, cfg); err != nil {
		t.Fatal(err)
	}
	// The events are the model's business (drive's checks); here, the
	// answers' other fields (empty events stay: a refusal records
	// nothing).
	got := regexp.MustCompile(`"events":\[[^]]+\],`).ReplaceAllString(out.String(), "")
	if got != want {
		t.Errorf("answers:\n%s\nwant:\n%s", got, want)
	}
	// Every answer is a protocol answer.
	var trace []traces.Event
	for i, line := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		a, err := drive.ParseAnswer([]byte(line))
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		trace = append(trace, a.Events...)
	}
	if len(trace) == 0 {
		t.Fatal("no events recorded")
	}
}

func TestServeAutogradBadInput(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{`{"id":1,"op":"alloc","handle":1,"size":8}`, `not a layer-5 call`},
		{`{"id":1,"op":"leaf","handle":1,"shape":[2],"values":[1],"requires_grad":true}`, `needs 2 values`},
	} {
		err := impldriver.ServeAutograd(strings.NewReader(tc.in+"\n"), &bytes.Buffer{}, impl.Config{}, autograd.Config{})
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ServeAutograd(%s): %v, want an error with %q", tc.in, err, tc.err)
		}
	}
	var out bytes.Buffer
	err := impldriver.ServeAutograd(strings.NewReader(`{"id":1,"op":"reset"}`+"\n"+`{"id":2,"op":"neg","handle":2,"a":7}`+"\n"), &out, impl.Config{}, autograd.Config{})
	if err != nil || !strings.Contains(out.String(), `{"id":2,"events":[{"op":"scope_enter"}],"outcome":"refused","message":"impldriver: no tensor under handle 7 (never made, or dropped)"}`) {
		t.Errorf("a call on a handle not held: %v\n%s", err, out.String())
	}
}
