package autograd_test

import (
	"fmt"
	"github.com/tlcheck/tlcheck/traces"
	"os"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
)

// calc is a tiny helper for examples: it stops at the first error.
type calc struct {
	e   *autograd.Engine
	err error
}

func (c *calc) k(v float64) *autograd.Tensor {
	t, err := c.e.Scalar(v)
	c.keep(err)
	return t
}

func (c *calc) keep(err error) {
	if c.err == nil {
		c.err = err
	}
}

func (c *calc) do(t *autograd.Tensor, err error) *autograd.Tensor {
	c.keep(err)
	return t
}

func (c *calc) item(t *autograd.Tensor) float64 {
	if c.err != nil {
		return 0
	}
	v, err := t.Item()
	c.keep(err)
	return v
}

// micrograd's test_sanity_check (karpathy/micrograd, test/test_engine.py):
// y = -20, dy/dx = 46, as micrograd and PyTorch give.
func Example_sanityCheck() {
	rt := impl.New(impl.Config{})
	e, _ := autograd.New(rt, autograd.Config{})
	c := &calc{e: e}
	c.keep(e.ScopeEnter())
	x := c.do(e.Leaf([]int{1}, []float64{-4}, true))
	z := c.do(c.do(c.do(c.k(2).Mul(x)).Add(c.k(2))).Add(x)) // 2*x + 2 + x
	q := c.do(c.do(z.Relu()).Add(c.do(z.Mul(x))))           // z.relu() + z*x
	h := c.do(c.do(z.Mul(z)).Relu())                        // (z*z).relu()
	y := c.do(c.do(h.Add(q)).Add(c.do(q.Mul(x))))           // h + q + q*x
	fmt.Println("y =", c.item(y))
	c.keep(y.Backward(false))
	fmt.Println("x.grad =", c.item(x.Grad()))
	c.keep(e.ScopeExit())
	fmt.Println("errors:", c.err)
	// Output:
	// y = -20
	// x.grad = 46
	// errors: <nil>
}

// micrograd's test_more_ops, written as its PyTorch half is (c = c + c +
// 1 for c += c + 1): g = 24.70408163265306, a.grad = 138.83381924198252,
// b.grad = 645.5772594752186 within 1e-6, as micrograd's test requires.
func Example_moreOps() {
	rt := impl.New(impl.Config{})
	e, _ := autograd.New(rt, autograd.Config{})
	c := &calc{e: e}
	c.keep(e.ScopeEnter())
	a := c.do(e.Leaf([]int{1}, []float64{-4}, true))
	b := c.do(e.Leaf([]int{1}, []float64{2}, true))
	cc := c.do(a.Add(b))
	d := c.do(c.do(a.Mul(b)).Add(c.do(b.Pow(3))))
	cc = c.do(c.do(cc.Add(cc)).Add(c.k(1)))
	cc = c.do(c.do(c.do(cc.Add(c.k(1))).Add(cc)).Add(c.do(a.Neg())))
	d = c.do(c.do(d.Add(c.do(d.Mul(c.k(2))))).Add(c.do(c.do(b.Add(a)).Relu())))
	d = c.do(c.do(d.Add(c.do(c.k(3).Mul(d)))).Add(c.do(c.do(b.Sub(a)).Relu())))
	ee := c.do(cc.Sub(d))
	f := c.do(ee.Pow(2))
	g := c.do(f.Div(c.k(2)))
	g = c.do(g.Add(c.do(c.k(10).Div(f))))
	fmt.Printf("g = %.6f\n", c.item(g))
	c.keep(g.Backward(false))
	fmt.Printf("a.grad = %.6f\n", c.item(a.Grad()))
	fmt.Printf("b.grad = %.6f\n", c.item(b.Grad()))
	c.keep(e.ScopeExit())
	fmt.Println("errors:", c.err)
	// Output:
	// g = 24.704082
	// a.grad = 138.833819
	// b.grad = 645.577259
	// errors: <nil>
}

// The trace an autograd step writes: the leaf and each op's output are
// runtime objects; exp's output is a graph tensor (unregister: its scope
// will not release it) that exp's node saves (acquire); backward reads
// what was saved, releases it and frees the intermediate; scope exit
// frees the rest. Replaying it with model.Replay finds nothing.
func Example_trace() {
	tw := traces.NewWriter(os.Stdout, impl.Header())
	rt := impl.New(impl.Config{Record: impl.RecordTo(tw)})
	e, _ := autograd.New(rt, autograd.Config{Record: impl.RecordTo(tw)})
	c := &calc{e: e}
	c.keep(e.ScopeEnter())
	x := c.do(e.Leaf([]int{1}, []float64{0}, true))
	s := c.do(c.do(x.Exp()).Sum())
	c.keep(s.Backward(false))
	c.keep(e.ScopeExit())
	c.keep(e.End())
	c.keep(tw.Close())
	fmt.Println("errors:", c.err)
	// Output:
	// {"format":"tlcheck-trace","version":1,"effects":true,"source":"tlcheck impl (Go)"}
	// {"op":"scope_enter"}
	// {"op":"alloc","addr":"0x10000000","size":8,"count":1}
	// {"op":"leaf_grad","addr":"0x10000000"}
	// {"op":"write","addr":"0x10000000","size":8}
	// {"op":"read","addr":"0x10000000","size":8}
	// {"op":"alloc","addr":"0x10000010","size":8,"count":1}
	// {"op":"write","addr":"0x10000010","size":8}
	// {"op":"unregister","addr":"0x10000010","count":1}
	// {"op":"acquire","addr":"0x10000010","count":2}
	// {"op":"save","name":"s1","addr":"0x10000010"}
	// {"op":"read","addr":"0x10000010","size":8}
	// {"op":"alloc","addr":"0x10000020","size":8,"count":1}
	// {"op":"write","addr":"0x10000020","size":8}
	// {"op":"unregister","addr":"0x10000020","count":1}
	// {"op":"alloc","addr":"0x10000030","size":8,"count":1}
	// {"op":"unregister","addr":"0x10000030","count":1}
	// {"op":"read","addr":"0x10000030","size":8}
	// {"op":"release","addr":"0x10000030","count":0}
	// {"op":"free","addr":"0x10000030"}
	// {"op":"alloc","addr":"0x10000030","size":8,"count":1}
	// {"op":"unregister","addr":"0x10000030","count":1}
	// {"op":"unpack","name":"s1"}
	// {"op":"read","addr":"0x10000010","size":8}
	// {"op":"read","addr":"0x10000030","size":8}
	// {"op":"release","addr":"0x10000030","count":0}
	// {"op":"free","addr":"0x10000030"}
	// {"op":"unsave","name":"s1"}
	// {"op":"release","addr":"0x10000010","count":1}
	// {"op":"alloc","addr":"0x10000030","size":8,"count":1}
	// {"op":"unregister","addr":"0x10000030","count":1}
	// {"op":"write","addr":"0x10000030","size":8}
	// {"op":"register","addr":"0x10000020","count":1}
	// {"op":"release","addr":"0x10000010","count":0}
	// {"op":"free","addr":"0x10000010"}
	// {"op":"release","addr":"0x10000030","count":0}
	// {"op":"free","addr":"0x10000030"}
	// {"op":"scope_exit"}
	// {"op":"free","addr":"0x10000020"}
	// {"op":"free","addr":"0x10000000"}
	// {"op":"end"}
	// errors: <nil>
}

// A checkpoint gives back what an in-place op overwrote: y = w*x saves
// x, and x += 1 would make backward fail in PyTorch's words. Inside
// Checkpoint the save is checkpointed, so add_ first copies x into a
// snapshot, and backward restores x from it: w's grad is the x that was
// multiplied. The snapshot is released with the graph.
func ExampleEngine_Checkpoint() {
	show := func(ev traces.Event) {
		switch ev.Op {
		case traces.OpSave, traces.OpSnapshot, traces.OpRestore:
			fmt.Println(ev.Op, ev.Name, ev.Addr)
		case traces.OpBump:
			fmt.Println(ev.Op, ev.Addr)
		case traces.OpUnsave:
			fmt.Println(ev.Op, ev.Name)
		}
	}
	e, _ := autograd.New(impl.New(impl.Config{}), autograd.Config{Record: show})
	c := &calc{e: e}
	c.keep(e.ScopeEnter())
	x := c.do(e.Leaf([]int{2}, []float64{1, 2}, false))
	w := c.do(e.Leaf([]int{2}, []float64{3, 4}, true))
	var y *autograd.Tensor
	c.keep(e.Checkpoint(func() (err error) { y, err = w.Mul(x); return err }))
	c.keep(x.AddInPlace(c.do(e.Scalar(1)), 1))
	c.keep(c.do(y.Sum()).Backward(false))
	g, _ := w.Grad().Values()
	v, _ := x.Values()
	fmt.Println("w.grad =", g, "x =", v)
	c.keep(e.ScopeExit())
	fmt.Println("errors:", c.err)
	// Output:
	// save s1 0x10000000
	// snapshot s1 0x10000040
	// bump 0x10000000
	// restore s1 0x10000040
	// unsave s1
	// w.grad = [1 2] x = [2 3]
	// errors: <nil>
}

// Under PyTorch's lifetime a graph lives while anything refers to it:
// the loss detached to be logged can still be backpropagated, and an
// intermediate read afterwards; dropping the tensors (Python's del)
// frees what they alone kept, and End frees the rest.
func ExampleLifetime() {
	rt := impl.New(impl.Config{})
	e, _ := autograd.New(rt, autograd.Config{Lifetime: autograd.LifetimePyTorch})
	c := &calc{e: e}
	c.keep(e.ScopeEnter())
	w := c.do(e.Leaf([]int{2}, []float64{1, 2}, true))
	h := c.do(w.Mul(w))
	loss := c.do(h.Sum())
	logged := c.do(loss.Detach())
	fmt.Println("loss =", c.item(logged))
	c.keep(loss.Backward(false))
	hv, err := h.Values()
	c.keep(err)
	gv, err := w.Grad().Values()
	c.keep(err)
	fmt.Println("h =", hv, "w.grad =", gv)
	c.keep(loss.Drop())
	c.keep(h.Drop())
	fmt.Println("objects alive:", len(rt.State().Objects))
	c.keep(e.ScopeExit())
	c.keep(e.End())
	fmt.Println("objects alive after End:", len(rt.State().Objects), "errors:", c.err)
	// Output:
	// loss = 5
	// h = [1 4] w.grad = [2 4]
	// objects alive: 3
	// objects alive after End: 0 errors: <nil>
}
