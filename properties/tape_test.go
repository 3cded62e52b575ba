package properties

import (
	"errors"
	"testing"

	"github.com/tlcheck/tlcheck/impl/autograd"
	"github.com/tlcheck/tlcheck/traces"
)

// TestTapeTraceClean: training loops written on an autograd.Tape replay
// clean under the model, a step that failed included, as long as what
// the step built is reachable: the tape's ScopeExit and FreeGraph run
// after its error (as Rows.Close does), so a refused update or a
// refused backward leaves nothing behind. A graph cut off in the forward
// pass, whose newest tensor the caller never got, is a leak at end, as
// the tape's doc says.
func TestTapeTraceClean(t *testing.T) {
	cases := []struct {
		name string
		fail func(tp *autograd.Tape, x, w *autograd.Tensor) // one failing step
		op   string                                         // the op it fails at
		leak bool                                           // the model reports leaks
	}{
		{"update outside no_grad", func(tp *autograd.Tape, x, w *autograd.Tensor) {
			tp.Backward(tp.Sum(tp.Tanh(tp.Matmul(x, w))), false)
			tp.SubInPlace(w, tp.Grad(w), 0.1)
		}, "sub_", false},
		{"saved tensor modified, graph freed", func(tp *autograd.Tape, x, w *autograd.Tensor) {
			h := tp.Tanh(tp.Matmul(x, w))
			loss := tp.Sum(h)
			tp.MulInPlace(h, 0.5)
			tp.Backward(loss, false)
			tp.FreeGraph(loss)
		}, "backward", false},
		{"saved tensor modified, graph kept", func(tp *autograd.Tape, x, w *autograd.Tensor) {
			h := tp.Tanh(tp.Matmul(x, w))
			loss := tp.Sum(h)
			tp.MulInPlace(h, 0.5)
			tp.Backward(loss, false)
		}, "backward", true},
		{"forward cut off", func(tp *autograd.Tape, x, w *autograd.Tensor) {
			tp.Sum(tp.Matmul(tp.Tanh(tp.Matmul(x, w)), x)) // [1,2] @ [1,2]
		}, "matmul", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, rec := recordedEngine(t, nil, autograd.Config{})
			params := autograd.NewTape(e)
			params.ScopeEnter()
			w := params.Leaf([]int{2, 2}, []float64{0.1, -0.2, 0.3, 0.4}, true)
			x := params.Leaf([]int{1, 2}, []float64{1, 2}, false)
			step := func(i int, fail bool) {
				tp := autograd.NewTape(e)
				tp.ScopeEnter()
				if fail {
					c.fail(tp, x, w)
				} else {
					tp.Backward(tp.Sum(tp.Tanh(tp.Matmul(x, w))), false)
					tp.NoGrad(func() { tp.SubInPlace(w, tp.Grad(w), 0.1) })
					tp.ClearGrads()
				}
				tp.ScopeExit()
				var te *autograd.TapeError
				switch err := tp.Err(); {
				case fail && (!errors.As(err, &te) || te.Op != c.op):
					t.Fatalf("step %d: Err() = %v, want a failure at %s", i, err, c.op)
				case !fail && err != nil:
					t.Fatalf("step %d: %v", i, err)
				}
			}
			for i := range 6 {
				step(i, i == 3)
			}
			params.ScopeExit()
			if err := params.Err(); err != nil {
				t.Fatal(err)
			}
			if err := e.End(); err != nil {
				t.Fatal(err)
			}
			rep := modelReplay(t, rec)
			if !c.leak {
				wantOneKind(t, nil, rep, "", "")
				return
			}
			if len(rep.Violations) == 0 {
				t.Error("the model reports nothing, want leaks")
			}
			for _, v := range rep.Violations {
				if v.Kind != traces.Leak {
					t.Errorf("the model reports %s: %s, want leaks only", v.Kind, v.Message)
				}
			}
		})
	}
}
