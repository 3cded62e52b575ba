package autograd_test

import (
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
)

// Under PyTorch's lifetime a step that failed drops what it made, after
// the error too, and End leaves nothing alive.
func TestTapeDropAfterError(t *testing.T) {
	rt := impl.New(impl.Config{})
	e, _ := autograd.New(rt, autograd.Config{Lifetime: autograd.LifetimePyTorch})
	tp := autograd.NewTape(e)
	tp.ScopeEnter()
	w := tp.Leaf([]int{2}, []float64{1, 2}, true)
	h := tp.Exp(w) // saves its output
	loss := tp.Sum(h)
	tp.MulInPlace(h, 2)
	tp.Backward(loss, false) // refused: h was modified
	if tp.Err() == nil {
		t.Fatal("no error")
	}
	before := len(rt.State().Objects)
	tp.Drop(loss)
	tp.Drop(h)
	tp.Drop(nil)
	if after := len(rt.State().Objects); after >= before {
		t.Errorf("%d objects alive after the drops, %d before: the drops after the error freed nothing", after, before)
	}
	tp.ScopeExit()
	if err := e.End(); err != nil {
		t.Fatal(err)
	}
}
