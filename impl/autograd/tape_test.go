package autograd_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
	"github.com/tlcheck/tlcheck/traces"
)

// recorded returns an engine over a runtime, both recording into rec.
func recorded(t *testing.T, rec *impl.Recording) *autograd.Engine {
	t.Helper()
	e, err := autograd.New(impl.New(impl.Config{Record: rec.Record}), autograd.Config{Record: rec.Record})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestTapeKeepsFirstError: the tape fails at the first op the engine
// refuses and Err names that op and its step, wrapping the engine's
// *Error; a second refusal after it changes nothing.
func TestTapeKeepsFirstError(t *testing.T) {
	cases := []struct {
		name string
		run  func(tp *autograd.Tape) // fails once, at op, step
		op   string
		step int
		msg  string // the engine's message, if an *Error
	}{
		{"leaf in place", func(tp *autograd.Tape) {
			w := tp.Leaf([]int{2}, []float64{1, 2}, true)
			tp.AddScalarInPlace(w, 1)
		}, "add_", 3, autograd.MsgLeafInPlace},
		{"shapes", func(tp *autograd.Tape) {
			a := tp.Leaf([]int{2, 3}, nil, true)
			tp.Tanh(tp.Matmul(a, a))
		}, "matmul", 3, "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"},
		{"backward twice", func(tp *autograd.Tape) {
			w := tp.Leaf([]int{1}, []float64{3}, true)
			loss := tp.Sum(tp.Mul(w, w))
			tp.Backward(loss, false)
			tp.Backward(loss, false)
		}, "backward", 6, autograd.MsgSecondBackward},
		{"saved modified", func(tp *autograd.Tape) {
			w := tp.Leaf([]int{1}, []float64{3}, true)
			h := tp.Exp(w)
			loss := tp.Sum(h)
			tp.MulInPlace(h, 2)
			tp.Backward(loss, false)
		}, "backward", 6, ""},
		{"item of many", func(tp *autograd.Tape) {
			tp.Item(tp.Leaf([]int{2}, nil, false))
		}, "item", 3, "a Tensor with 2 elements cannot be converted to Scalar"},
		{"no grad to update with", func(tp *autograd.Tape) {
			w := tp.Leaf([]int{1}, []float64{3}, true)
			tp.NoGrad(func() { tp.SubInPlace(w, tp.Grad(w), 0.1) })
		}, "sub_", 4, "a nil tensor"},
		{"backward of nil", func(tp *autograd.Tape) {
			tp.Backward(nil, false)
		}, "backward", 2, "a nil tensor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rec impl.Recording
			e := recorded(t, &rec)
			tp := autograd.NewTape(e)
			tp.ScopeEnter()
			c.run(tp)
			first := tp.Err()
			// More refusals: ops that do nothing now, and a ScopeExit
			// that runs and fails, its scope closed behind the tape's
			// back. The first error stays.
			tp.Backward(nil, true)
			tp.Item(nil)
			if err := e.ScopeExit(); err != nil {
				t.Fatal(err)
			}
			tp.ScopeExit()
			var te *autograd.TapeError
			if !errors.As(tp.Err(), &te) {
				t.Fatalf("Err() = %v (%T), want a *TapeError", tp.Err(), tp.Err())
			}
			if tp.Err() != first {
				t.Errorf("Err() = %v after more refusals, want the first, %v", tp.Err(), first)
			}
			if te.Op != c.op || te.Step != c.step {
				t.Errorf("Err() = %v: op %q at step %d, want %q at step %d", te, te.Op, te.Step, c.op, c.step)
			}
			var ae *autograd.Error
			if !errors.As(te, &ae) || ae.Op != c.op || c.msg != "" && ae.Msg != c.msg {
				t.Errorf("Err() = %v: want the engine's *Error of %s saying %q", te, c.op, c.msg)
			}
		})
	}
}

// TestTapeNilEngine: a tape without an engine has failed at step 0, and
// its ops do nothing (rather than panic).
func TestTapeNilEngine(t *testing.T) {
	tp := autograd.NewTape(nil)
	tp.ScopeEnter()
	x := tp.Scalar(1)
	tp.Backward(x, false)
	tp.ScopeExit()
	var te *autograd.TapeError
	if !errors.As(tp.Err(), &te) || te.Step != 0 || te.Op != "new" || x != nil {
		t.Errorf("Err() = %v, Scalar = %v: want step 0 (new) and nil", tp.Err(), x)
	}
}

// TestTapeNoOpsAfterError: after the first error every op returns nil
// and records nothing (no allocation, no read, no version bump in the
// trace) and allocates no Go memory; only ScopeExit runs, and it frees
// the failed scope's tensors without allocating.
func TestTapeNoOpsAfterError(t *testing.T) {
	var rec impl.Recording
	e := recorded(t, &rec)
	tp := autograd.NewTape(e)
	tp.ScopeEnter()
	w := tp.Leaf([]int{2}, []float64{1, 2}, true)
	c := tp.Scalar(2)
	tp.AddInPlace(w, c, 1) // refused: a leaf that requires grad
	if tp.Err() == nil {
		t.Fatal("add_ on a leaf that requires grad: no error")
	}
	before := len(rec.Events())
	step := tp.Err().(*autograd.TapeError).Step
	// The calls that take a slice (Leaf's shape, Reshape's) or a closure
	// (NoGrad, Checkpoint) allocate it in the caller, tape or not; the
	// others allocate nothing once the tape failed.
	ops := func(out []*autograd.Tensor) {
		out[0], out[1], out[2], out[3] = tp.Scalar(1), tp.Add(w, c), tp.Sub(w, c), tp.Mul(w, c)
		out[4], out[5], out[6], out[7] = tp.Div(w, c), tp.Matmul(w, w), tp.Neg(w), tp.Pow(w, 2)
		out[8], out[9], out[10], out[11] = tp.Relu(w), tp.Exp(w), tp.Log(w), tp.Tanh(w)
		out[12], out[13], out[14], out[15] = tp.Sum(w), tp.Slice(w, 0, 1), tp.Detach(w), tp.Grad(w)
		tp.AddInPlace(c, c, 1)
		tp.SubInPlace(c, c, 1)
		tp.MulTensorInPlace(c, c)
		tp.DivInPlace(c, c)
		tp.AddScalarInPlace(c, 1)
		tp.MulInPlace(c, 2)
		tp.ZeroInPlace(c)
		tp.Backward(tp.Sum(tp.Mul(w, w)), false)
		tp.Item(c)
		tp.Values(c)
		tp.ClearGrads()
		tp.FreeGraph(w)
	}
	out := make([]*autograd.Tensor, 18)
	ops(out)
	out[16], out[17] = tp.Leaf([]int{2}, nil, true), tp.Reshape(w, 2, 1)
	tp.NoGrad(func() { t.Error("NoGrad ran f after the error") })
	tp.Checkpoint(func() { t.Error("Checkpoint ran f after the error") })
	for i, x := range out {
		if x != nil {
			t.Errorf("op %d after the error returned tensor %d, want nil", i, x.ID())
		}
	}
	if got := rec.Events()[before:]; len(got) != 0 {
		t.Errorf("ops after the error recorded %v, want nothing", got)
	}
	if v, _ := c.Values(); v[0] != 2 {
		t.Errorf("in-place ops after the error changed the constant to %v", v[0])
	}
	if n := testing.AllocsPerRun(10, func() { ops(out) }); n != 0 {
		t.Errorf("ops after the error: %v Go allocations a run, want none", n)
	}
	if te := tp.Err().(*autograd.TapeError); te.Step != step {
		t.Errorf("the error's step moved from %d to %d", step, te.Step)
	}
	tp.ScopeExit()
	var frees int
	for _, ev := range rec.Events()[before:] {
		switch ev.Op {
		case traces.OpFree:
			frees++
		case traces.OpAlloc:
			t.Errorf("ScopeExit after the error allocated: %v", ev)
		}
	}
	if frees != 2 {
		t.Errorf("ScopeExit after the error freed %d buffers, want the scope's 2", frees)
	}
	if err := e.ScopeExit(); err == nil {
		t.Error("a scope is still open after the tape's ScopeExit")
	}
}

// linreg runs epochs of linear regression the primitive way, every
// (*Tensor, error) checked: the "before" of the Tape's example.
func linreg(e *autograd.Engine, x, y, w, b *autograd.Tensor, epochs int) error {
	for range epochs {
		if err := e.ScopeEnter(); err != nil {
			return err
		}
		xw, err := x.Matmul(w)
		if err != nil {
			return err
		}
		pred, err := xw.Add(b)
		if err != nil {
			return err
		}
		d, err := pred.Sub(y)
		if err != nil {
			return err
		}
		sq, err := d.Pow(2)
		if err != nil {
			return err
		}
		loss, err := sq.Sum()
		if err != nil {
			return err
		}
		if err := loss.Backward(false); err != nil {
			return err
		}
		err = e.NoGrad(func() error {
			if err := w.SubInPlace(w.Grad(), 0.05); err != nil {
				return err
			}
			return b.SubInPlace(b.Grad(), 0.05)
		})
		if err != nil {
			return err
		}
		if err := e.ClearGrads(); err != nil {
			return err
		}
		if err := e.ScopeExit(); err != nil {
			return err
		}
	}
	return nil
}

// linregTape is linreg on a Tape: the "after".
func linregTape(e *autograd.Engine, x, y, w, b *autograd.Tensor, epochs int) error {
	for range epochs {
		tp := autograd.NewTape(e)
		tp.ScopeEnter()
		loss := tp.Sum(tp.Pow(tp.Sub(tp.Add(tp.Matmul(x, w), b), y), 2))
		tp.Backward(loss, false)
		tp.NoGrad(func() {
			tp.SubInPlace(w, tp.Grad(w), 0.05)
			tp.SubInPlace(b, tp.Grad(b), 0.05)
		})
		tp.ClearGrads()
		tp.ScopeExit()
		if err := tp.Err(); err != nil {
			return err
		}
	}
	return nil
}

// TestTapeTraceIsPrimitive: a training loop on a Tape records the very
// trace of the same loop written with the primitive calls: the tape adds
// no buffer, read or version of its own.
func TestTapeTraceIsPrimitive(t *testing.T) {
	run := func(loop func(e *autograd.Engine, x, y, w, b *autograd.Tensor, epochs int) error) ([]traces.Event, []float64) {
		var rec impl.Recording
		e := recorded(t, &rec)
		tp := autograd.NewTape(e)
		tp.ScopeEnter()
		x := tp.Leaf([]int{4, 1}, []float64{0, 1, 2, 3}, false)
		y := tp.Leaf([]int{4, 1}, []float64{1, 3, 5, 7}, false)
		w := tp.Leaf([]int{1, 1}, nil, true)
		b := tp.Leaf([]int{1}, nil, true)
		if err := tp.Err(); err != nil {
			t.Fatal(err)
		}
		if err := loop(e, x, y, w, b, 5); err != nil {
			t.Fatal(err)
		}
		got := []float64{tp.Item(w), tp.Item(b)}
		tp.ScopeExit()
		if err := tp.Err(); err != nil {
			t.Fatal(err)
		}
		return rec.Events(), got
	}
	want, wantWB := run(linreg)
	got, gotWB := run(linregTape)
	if !reflect.DeepEqual(gotWB, wantWB) {
		t.Errorf("w, b = %v on the tape, %v without", gotWB, wantWB)
	}
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("event %d: %v on the tape, %v without", i+1, got[i], want[i])
		}
	}
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("%d events on the tape, %d without", len(got), len(want))
	}
}
