package drive

import (
	"math"
	"testing"
)

func TestCompareAnswers(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tensor := func(vals ...float64) *TensorState {
		return &TensorState{Shape: []int{len(vals)}, Values: vals, RequiresGrad: true, GradFn: "MulBackward0", Version: 1}
	}
	with := func(f func(*TensorState)) *TensorState {
		ts := tensor(1, 2)
		f(ts)
		return ts
	}
	done := func(ts *TensorState) Outcome { return Outcome{Tensor: ts} }
	refused := func(msg string) Outcome { return Outcome{Refused: true, Message: msg} }
	grads := func(gs ...Grad) Outcome { return Outcome{Grads: gs} }
	for _, tc := range []struct {
		name  string
		a, b  Outcome
		field string // "" for none
	}{
		{"equal", done(tensor(1, 2)), done(tensor(1, 2)), ""},
		{"within 1e-9", done(tensor(1, 2)), done(tensor(1+1e-10, 2)), ""},
		{"beyond 1e-9", done(tensor(1, 2)), done(tensor(1+1e-8, 2)), "tensor.values[0]"},
		{"0 and a last bit's rounding", done(tensor(0, 2)), done(tensor(4.4e-16, 2)), ""},
		{"0 and 1e-11", done(tensor(0, 2)), done(tensor(1e-11, 2)), "tensor.values[0]"},
		{"a cancellation's rounding", done(tensor(-7.420153091963755e-08, 2)), done(tensor(-7.42015307666968e-08, 2)), ""},
		{"NaN equals NaN", done(tensor(nan, 2)), done(tensor(nan, 2)), ""},
		{"NaN and a number", done(tensor(nan, 2)), done(tensor(1, 2)), "tensor.values[0]"},
		{"inf equals inf", done(tensor(inf, -inf)), done(tensor(inf, -inf)), ""},
		{"inf and -inf", done(tensor(inf, 2)), done(tensor(-inf, 2)), "tensor.values[0]"},
		{"inf and a large number", done(tensor(inf, 2)), done(tensor(math.MaxFloat64, 2)), "tensor.values[0]"},
		{"outcome", done(tensor(1, 2)), refused("no"), "outcome"},
		{"message", refused("a"), refused("b"), "message"},
		{"missing handles, each driver's words", refused("torchdriver: no tensor under handle 3 (never made, or dropped)"),
			refused("impldriver: no tensor under handle 3 (never made, or dropped)"), ""},
		{"a tensor and none", done(tensor(1, 2)), done(nil), "tensor"},
		{"shape", done(tensor(1, 2)), done(with(func(ts *TensorState) { ts.Shape = []int{1, 2} })), "tensor.shape"},
		{"requires_grad", done(tensor(1, 2)), done(with(func(ts *TensorState) { ts.RequiresGrad = false })), "tensor.requires_grad"},
		{"is_leaf", done(tensor(1, 2)), done(with(func(ts *TensorState) { ts.IsLeaf = true })), "tensor.is_leaf"},
		{"grad_fn", done(tensor(1, 2)), done(with(func(ts *TensorState) { ts.GradFn = "" })), "tensor.grad_fn"},
		{"version", done(tensor(1, 2)), done(with(func(ts *TensorState) { ts.Version = 2 })), "tensor.version"},
		{"grads equal", grads(Grad{1, []float64{1}}), grads(Grad{1, []float64{1}}), ""},
		{"grads of other handles", grads(Grad{1, []float64{1}}), grads(Grad{2, []float64{1}}), "grads"},
		{"grads and none", grads(Grad{1, []float64{1}}), Outcome{}, "grads"},
		{"a grad's value", grads(Grad{1, []float64{1}}, Grad{3, []float64{1, 2}}), grads(Grad{1, []float64{1}}, Grad{3, []float64{1, 3}}), "grads[handle 3].values[1]"},
	} {
		d := compareAnswers(&tc.a, &tc.b, tolerance{DefaultTolerance, DefaultAbsolute})
		switch {
		case tc.field == "" && d != nil:
			t.Errorf("%s: %s: %s vs %s, want no difference", tc.name, d.Field, d.A, d.B)
		case tc.field != "" && (d == nil || d.Field != tc.field):
			t.Errorf("%s: %+v, want a difference in %s", tc.name, d, tc.field)
		}
	}
}

func TestDisagreementSignature(t *testing.T) {
	calls := []TensorCall{{Op: TensorLeaf}, {Op: TensorBackward}, {Op: TensorEnd}}
	for field, want := range map[string]string{
		"tensor.values[3]":          "tensor.values@backward",
		"grads[handle 2].values[0]": "grads.values@backward",
		"model A leak":              "model A leak@backward",
		"outcome":                   "outcome@backward",
	} {
		d := &Disagreement{Calls: calls, Call: 1, Difference: Difference{Field: field}}
		if got := d.signature(); got != want {
			t.Errorf("signature of %s: %s, want %s", field, got, want)
		}
	}
}
