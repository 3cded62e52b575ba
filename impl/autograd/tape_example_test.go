package autograd_test

import (
	"errors"
	"fmt"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
)

// Linear regression, trained as PyTorch's tutorials train it, one Tape
// an epoch; the loop body is the PyTorch original line for line:
//
//	pred = x @ w + b
//	loss = ((pred - y) ** 2).sum()
//	loss.backward()
//	with torch.no_grad():
//	    w -= lr * w.grad
//	    b -= lr * b.grad
//	w.grad = None; b.grad = None
//
// and the error is checked once an epoch, where it names the op and its
// step.
func ExampleTape() {
	e, _ := autograd.New(impl.New(impl.Config{}), autograd.Config{})
	params := autograd.NewTape(e)
	params.ScopeEnter() // the parameters' and the data's scope
	x := params.Leaf([]int{4, 1}, []float64{0, 1, 2, 3}, false)
	y := params.Leaf([]int{4, 1}, []float64{1, 3, 5, 7}, false) // y = 2x + 1
	w := params.Leaf([]int{1, 1}, []float64{0}, true)
	b := params.Leaf([]int{1}, []float64{0}, true)
	if err := params.Err(); err != nil {
		fmt.Println(err)
		return
	}
	const lr = 0.05
	for epoch := 1; epoch <= 100; epoch++ {
		tp := autograd.NewTape(e)
		tp.ScopeEnter()
		pred := tp.Add(tp.Matmul(x, w), b)
		loss := tp.Sum(tp.Pow(tp.Sub(pred, y), 2))
		tp.Backward(loss, false)
		tp.NoGrad(func() {
			tp.SubInPlace(w, tp.Grad(w), lr)
			tp.SubInPlace(b, tp.Grad(b), lr)
		})
		tp.ClearGrads()
		if epoch == 1 || epoch == 100 {
			fmt.Printf("epoch %d: loss %.6f\n", epoch, tp.Item(loss))
		}
		tp.ScopeExit()
		if err := tp.Err(); err != nil {
			fmt.Printf("epoch %d: %v\n", epoch, err)
			return
		}
	}
	fmt.Printf("w = %.4f, b = %.4f\n", params.Item(w), params.Item(b))
	params.ScopeExit()
	fmt.Println("errors:", params.Err())
	// Output:
	// epoch 1: loss 84.000000
	// epoch 100: loss 0.000000
	// w = 2.0000, b = 1.0000
	// errors: <nil>
}

// The update written outside no_grad: PyTorch raises at w -= ..., and
// the tape fails there. The ops after it do nothing and return nil; Err
// names the op and its step, and wraps the engine's *Error with
// PyTorch's message.
func ExampleTape_Err() {
	e, _ := autograd.New(impl.New(impl.Config{}), autograd.Config{})
	tp := autograd.NewTape(e)
	tp.ScopeEnter()                                      // step 1
	w := tp.Leaf([]int{2}, []float64{1, 2}, true)        // step 2
	loss := tp.Sum(tp.Mul(w, w))                         // steps 3, 4
	tp.Backward(loss, false)                             // step 5
	tp.SubInPlace(w, tp.Grad(w), 0.1)                    // steps 6, 7: refused
	tp.SubInPlace(w, tp.Grad(w), 0.1)                    // nothing
	fmt.Println("after the error:", tp.Mul(w, w) == nil) // nothing, the poisoned tensor
	tp.ScopeExit()                                       // still closes step 1's scope
	fmt.Println(tp.Err())
	var ae *autograd.Error
	fmt.Println(errors.As(tp.Err(), &ae) && ae.Msg == autograd.MsgLeafInPlace)
	// Output:
	// after the error: true
	// tape step 7 (sub_): autograd: sub_ on tensor 1: a leaf Variable that requires grad is being used in an in-place operation.
	// true
}
