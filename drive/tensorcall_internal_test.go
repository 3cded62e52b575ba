package drive

import (
	"math"
	"strings"
	"testing"
)

func TestParseTensorCall(t *testing.T) {
	for _, tc := range []struct {
		line string
		want string // the call as AppendJSON writes it, or the error's text
	}{
		{`{"id":3,"op":"leaf","handle":1,"shape":[2,3],"values":[1,2,3,4,5,"nan"],"requires_grad":true}`,
			`{"op":"leaf","handle":1,"shape":[2,3],"values":[1,2,3,4,5,"nan"],"requires_grad":true}`},
		{`{"op":"leaf","handle":1,"shape":[],"values":[0.5],"requires_grad":false,"no_grad":true}`,
			`{"op":"leaf","handle":1,"shape":[],"values":[0.5],"requires_grad":false,"no_grad":true}`},
		{`{"op":"mul","handle":3,"a":1,"b":2,"x":[{"y":1}]}`, `{"op":"mul","handle":3,"a":1,"b":2}`},
		{`{"op":"pow","handle":3,"a":1,"exponent":"-inf"}`, `{"op":"pow","handle":3,"a":1,"exponent":"-inf"}`},
		{`{"op":"slice","handle":4,"a":1,"start":0,"stop":2}`, `{"op":"slice","handle":4,"a":1,"start":0,"stop":2}`},
		{`{"op":"add_","target":2,"scalar":2.5}`, `{"op":"add_","target":2,"scalar":2.5}`},
		{`{"op":"mul_","target":2,"b":1,"no_grad":false}`, `{"op":"mul_","target":2,"b":1}`},
		{`{"op":"backward","target":2,"retain_graph":true}`, `{"op":"backward","target":2,"retain_graph":true}`},
		{`{"op":"end"}`, `{"op":"end"}`},
		{`{"op":"mul_","target":2}`, `"b" (a tensor) or "scalar"`},
		{`{"op":"mul_","target":2,"b":1,"scalar":2}`, `"b" (a tensor) or "scalar"`},
		{`{"op":"leaf","handle":1,"shape":[2],"values":[1],"requires_grad":true}`, "needs 2 values"},
		{`{"op":"add","handle":3,"a":1}`, "add needs [handle a b]"},
		{`{"op":"alloc","handle":3,"size":1}`, `"alloc" is not a layer-5 call`},
		{`{"op":"exp","handle":3,"a":1,"no_grad":1}`, "true or false"},
		{`{"op":"pow","handle":3,"a":1,"exponent":"two"}`, `want a number or "nan"`},
	} {
		c, _, reset, err := ParseTensorCall([]byte(tc.line))
		if err != nil {
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseTensorCall(%s): %v, want an error with %q", tc.line, err, tc.want)
			}
			continue
		}
		if got := string(c.AppendJSON(nil)); got != tc.want || reset {
			t.Errorf("ParseTensorCall(%s) = %s (reset %v), want %s", tc.line, got, reset, tc.want)
		}
	}
}

func TestAnswerRoundTrip(t *testing.T) {
	line := `{"id":7,"events":[{"op":"save","name":"s1","addr":"0x1000"}],"outcome":"done",` +
		`"tensor":{"shape":[2],"values":["inf",-0.5],"requires_grad":true,"is_leaf":false,"grad_fn":"MulBackward0","version":2},` +
		`"grads":[{"handle":1,"values":["nan",1]}]}`
	a, err := ParseAnswer([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if a.Tensor == nil || !math.IsInf(a.Tensor.Values[0], 1) || a.Tensor.GradFn != "MulBackward0" || a.Tensor.Version != 2 ||
		len(a.Grads) != 1 || !math.IsNaN(a.Grads[0].Values[0]) {
		t.Fatalf("ParseAnswer(%s) = %+v", line, a)
	}
	if got := string(a.AppendJSON(nil)); got != line {
		t.Errorf("AppendJSON:\n got %s\nwant %s", got, line)
	}
	null := `{"id":8,"events":[],"outcome":"refused","message":"no","tensor":{"shape":[],"values":[1],"grad_fn":null}}`
	if a, err := ParseAnswer([]byte(null)); err != nil || a.Tensor.GradFn != "" || len(a.Tensor.Shape) != 0 {
		t.Errorf("ParseAnswer(%s) = %+v, %v", null, a, err)
	}
}
