package autograd

import (
	"errors"
	"strconv"
)

// Tape runs ops on an [Engine] and keeps the first error, so that a
// training loop reads as its PyTorch original does and checks once, as
// a [bufio.Writer], a [bufio.Scanner] or a [database/sql.Rows] lets its
// caller do: each op takes and returns *Tensor; the first op the engine refuses
// makes the tape fail, and from then on every op is a no-op that returns
// nil, the poisoned tensor, and touches neither the engine nor its
// runtime. Err reports that first error, naming the op and its step.
//
// The exceptions are the calls that release, ScopeExit, FreeGraph and
// Drop, which, like [database/sql.Rows.Close], still run after an error: ScopeExit closes the
// scopes this tape opened, so that a failed step does not leave its
// tensors to the step after it, and FreeGraph frees a graph whose
// backward was refused. (A graph cut off by an error in the forward pass,
// whose newest tensor the caller never got, lives on, as it would with
// the primitive calls' early return.)
//
// A Tape is cheap: make one per training step, so that a step number in
// an error counts from that step's first op. The Engine's own methods,
// which return (*Tensor, error), stay the primitive; a Tape only calls
// them. It is not safe for concurrent use.
type Tape struct {
	e      *Engine
	step   int // ops run, the failing one included
	scopes int // scopes this tape opened and has not closed
	err    *TapeError
}

// TapeError is the first error a Tape met: the op that failed, its place
// on the tape and the engine's error, which it wraps (errors.As finds
// the *Error beneath, with PyTorch's message).
type TapeError struct {
	Step int    // the op's place on the tape, from 1
	Op   string // the op, as the engine names it: "add", "add_", "backward", ...
	Err  error
}

// Error reads "tape step 4 (add_): autograd: add_ on tensor 1: ...".
func (e *TapeError) Error() string {
	return "tape step " + strconv.Itoa(e.Step) + " (" + e.Op + "): " + e.Err.Error()
}

// Unwrap returns the engine's error.
func (e *TapeError) Unwrap() error { return e.Err }

// NewTape returns a tape that runs ops on e. A nil e gives a tape that
// has failed already, at step 0.
func NewTape(e *Engine) *Tape {
	tp := &Tape{e: e}
	if e == nil {
		tp.err = &TapeError{Op: "new", Err: errors.New("autograd: NewTape needs an engine")}
	}
	return tp
}

// Err returns the first error the tape met, a *TapeError, or nil.
func (tp *Tape) Err() error {
	if tp.err == nil {
		return nil // not a nil *TapeError in a non-nil error
	}
	return tp.err
}

// Engine returns the engine the tape runs on.
func (tp *Tape) Engine() *Engine { return tp.e }

// run reports whether the tape may run the next op, and counts it.
func (tp *Tape) run() bool {
	if tp.err != nil {
		return false
	}
	tp.step++
	return true
}

// fail keeps err, if it is the first, as the error of the current step.
func (tp *Tape) fail(op string, err error) {
	if err != nil && tp.err == nil {
		tp.err = &TapeError{Step: tp.step, Op: op, Err: err}
	}
}

// keep returns t, or nil once op's err made the tape fail.
func (tp *Tape) keep(op string, t *Tensor, err error) *Tensor {
	tp.fail(op, err)
	if err != nil {
		return nil
	}
	return t
}

// nilTensor is the engine's refusal of a nil operand, for the calls
// whose primitive has no error to give one (Grad) or would dereference
// it (Backward, FreeGraph).
func nilTensor(op string) error { return &Error{Op: op, Msg: "a nil tensor"} }

// Leaf is Engine.Leaf.
func (tp *Tape) Leaf(shape []int, values []float64, requiresGrad bool) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := tp.e.Leaf(shape, values, requiresGrad)
	return tp.keep("tensor", t, err)
}

// Scalar is Engine.Scalar: a constant.
func (tp *Tape) Scalar(v float64) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := tp.e.Scalar(v)
	return tp.keep("tensor", t, err)
}

// Add returns a + b (Tensor.Add).
func (tp *Tape) Add(a, b *Tensor) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Add(b)
	return tp.keep("add", t, err)
}

// Sub returns a - b (Tensor.Sub).
func (tp *Tape) Sub(a, b *Tensor) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Sub(b)
	return tp.keep("sub", t, err)
}

// Mul returns a * b (Tensor.Mul).
func (tp *Tape) Mul(a, b *Tensor) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Mul(b)
	return tp.keep("mul", t, err)
}

// Div returns a / b (Tensor.Div).
func (tp *Tape) Div(a, b *Tensor) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Div(b)
	return tp.keep("div", t, err)
}

// Matmul returns the matrix product of a and b (Tensor.Matmul).
func (tp *Tape) Matmul(a, b *Tensor) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Matmul(b)
	return tp.keep("matmul", t, err)
}

// Neg returns -a (Tensor.Neg).
func (tp *Tape) Neg(a *Tensor) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Neg()
	return tp.keep("neg", t, err)
}

// Pow returns a to the power c (Tensor.Pow).
func (tp *Tape) Pow(a *Tensor, c float64) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Pow(c)
	return tp.keep("pow", t, err)
}

// Relu returns max(a, 0) (Tensor.Relu).
func (tp *Tape) Relu(a *Tensor) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Relu()
	return tp.keep("relu", t, err)
}

// Exp returns e to the a (Tensor.Exp).
func (tp *Tape) Exp(a *Tensor) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Exp()
	return tp.keep("exp", t, err)
}

// Log returns ln a (Tensor.Log).
func (tp *Tape) Log(a *Tensor) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Log()
	return tp.keep("log", t, err)
}

// Tanh returns tanh a (Tensor.Tanh).
func (tp *Tape) Tanh(a *Tensor) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Tanh()
	return tp.keep("tanh", t, err)
}

// Sum returns the sum of a's elements (Tensor.Sum).
func (tp *Tape) Sum(a *Tensor) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Sum()
	return tp.keep("sum", t, err)
}

// Reshape returns a view of a with another shape (Tensor.Reshape).
func (tp *Tape) Reshape(a *Tensor, shape ...int) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Reshape(shape...)
	return tp.keep("reshape", t, err)
}

// Slice returns the view a[lo:hi] (Tensor.Slice).
func (tp *Tape) Slice(a *Tensor, lo, hi int) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Slice(lo, hi)
	return tp.keep("slice", t, err)
}

// Detach returns a outside any graph (Tensor.Detach).
func (tp *Tape) Detach(a *Tensor) *Tensor {
	if !tp.run() {
		return nil
	}
	t, err := a.Detach()
	return tp.keep("detach", t, err)
}

// AddInPlace does t += alpha*o (Tensor.AddInPlace, PyTorch's add_).
func (tp *Tape) AddInPlace(t, o *Tensor, alpha float64) {
	if tp.run() {
		tp.fail("add_", t.AddInPlace(o, alpha))
	}
}

// SubInPlace does t -= alpha*o (Tensor.SubInPlace, sub_).
func (tp *Tape) SubInPlace(t, o *Tensor, alpha float64) {
	if tp.run() {
		tp.fail("sub_", t.SubInPlace(o, alpha))
	}
}

// MulTensorInPlace does t *= o (Tensor.MulTensorInPlace, mul_).
func (tp *Tape) MulTensorInPlace(t, o *Tensor) {
	if tp.run() {
		tp.fail("mul_", t.MulTensorInPlace(o))
	}
}

// DivInPlace does t /= o (Tensor.DivInPlace, div_).
func (tp *Tape) DivInPlace(t, o *Tensor) {
	if tp.run() {
		tp.fail("div_", t.DivInPlace(o))
	}
}

// AddScalarInPlace does t += c for a number c (Tensor.AddScalarInPlace, add_).
func (tp *Tape) AddScalarInPlace(t *Tensor, c float64) {
	if tp.run() {
		tp.fail("add_", t.AddScalarInPlace(c))
	}
}

// MulInPlace does t *= c for a number c (Tensor.MulInPlace, mul_).
func (tp *Tape) MulInPlace(t *Tensor, c float64) {
	if tp.run() {
		tp.fail("mul_", t.MulInPlace(c))
	}
}

// ZeroInPlace sets t to zeros (Tensor.ZeroInPlace, zero_).
func (tp *Tape) ZeroInPlace(t *Tensor) {
	if tp.run() {
		tp.fail("zero_", t.ZeroInPlace())
	}
}

// Backward runs backward from t (Tensor.Backward).
func (tp *Tape) Backward(t *Tensor, retainGraph bool) {
	if !tp.run() {
		return
	}
	if t == nil {
		tp.fail("backward", nilTensor("backward"))
		return
	}
	tp.fail("backward", t.Backward(retainGraph))
}

// Grad returns t's grad (Tensor.Grad): nil once the tape failed, and nil
// when t has none, which the op given it then refuses.
func (tp *Tape) Grad(t *Tensor) *Tensor {
	if !tp.run() {
		return nil
	}
	if t == nil {
		tp.fail("grad", nilTensor("grad"))
		return nil
	}
	return t.Grad()
}

// Item returns the value of a one-element tensor (Tensor.Item): 0 once
// the tape failed, as bufio.Scanner's Text is "" after a failed Scan.
func (tp *Tape) Item(t *Tensor) float64 {
	if !tp.run() {
		return 0
	}
	v, err := t.Item()
	tp.fail("item", err)
	return v
}

// Values returns a copy of t's values (Tensor.Values): nil once the tape
// failed.
func (tp *Tape) Values(t *Tensor) []float64 {
	if !tp.run() {
		return nil
	}
	v, err := t.Values()
	tp.fail("values", err)
	return v
}

// ScopeEnter opens a scope (Engine.ScopeEnter); the tape's ScopeExit
// closes it, even after an error.
func (tp *Tape) ScopeEnter() {
	if !tp.run() {
		return
	}
	err := tp.e.ScopeEnter()
	if err == nil {
		tp.scopes++
	}
	tp.fail("scope_enter", err)
}

// ScopeExit closes the newest scope this tape opened (Engine.ScopeExit).
// It runs even after an error, as Rows.Close does, so that the tensors
// of a failed step die with its scope; with no scope of the tape's open
// it is a no-op. Its own error is kept only if it is the first.
func (tp *Tape) ScopeExit() {
	if tp.scopes == 0 {
		return
	}
	tp.scopes--
	if tp.err == nil {
		tp.step++
	}
	tp.fail("scope_exit", tp.e.ScopeExit())
}

// NoGrad runs f with graph recording off (Engine.NoGrad); f's ops are
// the tape's. Once the tape failed, f does not run.
func (tp *Tape) NoGrad(f func()) {
	if tp.err == nil {
		_ = tp.e.NoGrad(func() error { f(); return nil }) // f's errors are the tape's
	}
}

// Checkpoint runs f with checkpointing on (Engine.Checkpoint); f's ops
// are the tape's. Once the tape failed, f does not run.
func (tp *Tape) Checkpoint(f func()) {
	if tp.err == nil {
		_ = tp.e.Checkpoint(func() error { f(); return nil })
	}
}

// ClearGrads sets every grad to none (Engine.ClearGrads).
func (tp *Tape) ClearGrads() {
	if tp.run() {
		tp.fail("clear_grads", tp.e.ClearGrads())
	}
}

// FreeGraph frees the graph upstream of t (Engine.FreeGraph), t a graph
// never to be backpropagated, or one whose backward was refused. Like
// ScopeExit it runs even after an error, and its own error is kept only
// if it is the first; a nil t (the poisoned tensor) is then a no-op.
func (tp *Tape) FreeGraph(t *Tensor) {
	if tp.e == nil {
		return
	}
	if tp.err == nil {
		tp.step++
	}
	if t == nil {
		if tp.err == nil {
			tp.fail("free_graph", nilTensor("free_graph"))
		}
		return
	}
	tp.fail("free_graph", tp.e.FreeGraph(t))
}

// Drop gives up the program's reference to t (Tensor.Drop, Python's del;
// PyTorch's lifetime only). Like ScopeExit it runs even after an error,
// and its own error is kept only if it is the first; a nil t (the
// poisoned tensor) is then a no-op.
func (tp *Tape) Drop(t *Tensor) {
	if tp.e == nil {
		return
	}
	if tp.err == nil {
		tp.step++
	} else if t == nil {
		return
	}
	tp.fail("drop", t.Drop())
}
