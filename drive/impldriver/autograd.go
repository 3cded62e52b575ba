package impldriver

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/autograd"
	"github.com/tlcheck/tlcheck/traces"
)

// ServeAutograd reads layer-5 calls (PROTOCOL.md's autograd programs)
// from in and answers each on out, against the autograd engine of package
// impl/autograd configured by acfg, over a runtime configured by cfg (its
// faults on, the engine's among them; both Record hooks are the
// driver's), until in ends. Its hello lists layer 5. A program's
// handles name tensors; each answer carries the events the runtime and
// the engine recorded for the call, the outcome (a refusal's message is
// the engine's, in PyTorch's words), the tensor the call made or wrote
// and, for backward, the grads of the handles held.
func ServeAutograd(in io.Reader, out io.Writer, cfg impl.Config, acfg autograd.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	s := &server5{cfg: cfg, acfg: acfg}
	rec := func(ev traces.Event) {
		if !s.reading || ev.Op != traces.OpRead {
			s.events = append(s.events, ev)
		}
	}
	s.cfg.Record, s.acfg.Record = rec, rec
	if err := s.reset(); err != nil {
		return err
	}
	return loop(in, out, s.hello, s.serve)
}

// loop is the protocol's read-answer loop: the hello, then each line
// answered until in ends, the answers flushed before a wait for input.
func loop(in io.Reader, out io.Writer, hello func(*bufio.Writer) error, serve func(line []byte, w *bufio.Writer) error) error {
	r, w := bufio.NewReaderSize(in, MaxLine), bufio.NewWriterSize(out, 64<<10)
	if err := hello(w); err != nil {
		return err
	}
	for {
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("impldriver: a line longer than %d bytes", r.Size())
		}
		if err == io.EOF && len(line) == 0 {
			return w.Flush()
		}
		if err != nil && err != io.EOF {
			return err
		}
		if err := serve(line, w); err != nil {
			return err
		}
	}
}

// server5 is the layer-5 driver's state: one engine per program, and the
// tensors the program's handles name.
type server5 struct {
	cfg     impl.Config
	acfg    autograd.Config
	rt      *impl.Runtime
	e       *autograd.Engine
	handles map[int]*autograd.Tensor
	events  []traces.Event
	reading bool // the answer's reads of values are not the program's: not recorded
	scoped  bool // the program's scope is open
	buf     []byte
}

func (s *server5) hello(w *bufio.Writer) error {
	h := drive.Hello{Protocol: drive.ProtocolName, Version: drive.ProtocolVersion, Layers: []int{5},
		Source: "tlcheck impl/autograd (Go) over tlcheck-drive, lifetime " + s.acfg.Lifetime.String()}
	for _, f := range s.cfg.Faults {
		h.Source += ", fault " + string(f)
	}
	h.Notes = append(h.Notes, "matmul is torch.mm, of two matrices: a vector operand is refused (\"self must be a matrix\", \"mat2 must be a matrix\"), where PyTorch's @ takes it")
	// Each note's difference as data, which the differential honours.
	h.Departures = append(h.Departures, drive.Departure{Name: "matmul-matrices-only", Op: string(drive.TensorMatmul),
		Message: "must be a matrix", Note: "matmul is torch.mm: an operand that is not a matrix is refused so"})
	h.Notes = append(h.Notes, "a view made under no_grad whose base was then written in place is answered as the engine sees it (a leaf); PyTorch refuses to tell its grad_fn (\"<error: A view was created in no_grad mode and its base ...>\")")
	h.Departures = append(h.Departures, drive.Departure{Name: "no-grad-view-stale", Field: "tensor",
		Other: "A view was created in no_grad mode and its base or another view of its base has been modified inplace",
		Note:  "a stale view made under no_grad: the engine answers its tensor, PyTorch refuses to tell its grad_fn"})
	if s.acfg.Lifetime != autograd.LifetimePyTorch {
		h.Notes = append(h.Notes, "TensorLogic's lifetime: backward frees the graph's intermediates, detach the graph upstream, drop the tensor's graph; a tensor used after is refused (\"the tensor was freed ...\"), where PyTorch keeps what is referred to")
		h.Departures = append(h.Departures, drive.Departure{Name: "tensorlogic-frees", Field: "outcome",
			Message: "the tensor was freed", Note: "TensorLogic's lifetime refuses a tensor it freed, where PyTorch keeps it"})
	}
	if s.acfg.Checkpoint {
		h.Notes = append(h.Notes, "checkpoints on: a saved tensor modified in place is restored or recomputed at backward, where PyTorch refuses it")
		h.Departures = append(h.Departures, drive.Departure{Name: "checkpoint-restores", Op: string(drive.TensorBackward), Field: "outcome",
			Other: "modified by an inplace operation", Note: "checkpoints restore a saved tensor modified in place, where PyTorch refuses the backward"})
	}
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// reset throws the program's engine away, recording nothing, and makes a
// fresh one.
func (s *server5) reset() error {
	s.rt = impl.New(s.cfg)
	e, err := autograd.New(s.rt, s.acfg)
	if err != nil {
		return err
	}
	s.e, s.scoped = e, false
	clear(s.handles)
	if s.handles == nil {
		s.handles = map[int]*autograd.Tensor{}
	}
	return nil
}

func (s *server5) serve(line []byte, w *bufio.Writer) error {
	c, id, reset, err := drive.ParseTensorCall(line)
	if err != nil {
		return fmt.Errorf("impldriver: %q: %w", line, err)
	}
	s.events = s.events[:0]
	var made *autograd.Tensor
	if reset {
		if err := s.reset(); err != nil {
			return fmt.Errorf("impldriver: reset: %w", err)
		}
	} else {
		made, err = s.call(&c)
	}
	// Reading the answer's tensor may change the engine, as it does
	// PyTorch: a view's grad_fn is made anew when asked for (a node, an
	// object of the runtime). What that records is the call's; the reads
	// of values are not.
	s.reading = true
	a := drive.Answer{ID: id}
	switch {
	case err != nil:
		a.Refused, a.Message = true, message(err)
	case made != nil:
		a.Tensor = state(made)
	}
	if c.Op == drive.TensorBackward {
		// Refused too: PyTorch's nodes that ran before a refusal have
		// accumulated their gradients.
		a.Grads = s.grads()
	}
	s.reading = false
	a.Events = s.events
	s.buf = append(a.AppendJSON(s.buf[:0]), '\n')
	_, err = w.Write(s.buf)
	return err
}

// message is a refusal's message: the engine's own words (PyTorch's,
// where PyTorch refuses the same call) without the op and tensor the Go
// error names.
func message(err error) string {
	var ae *autograd.Error
	if errors.As(err, &ae) {
		return ae.Msg
	}
	return err.Error()
}

// tensor returns the tensor handle h names.
func (s *server5) tensor(h int) (*autograd.Tensor, error) {
	t := s.handles[h]
	if t == nil {
		return nil, fmt.Errorf("impldriver: no tensor under handle %d (never made, or dropped)", h)
	}
	return t, nil
}

// call makes c on the engine; it returns the tensor the answer shows (the
// one made, or the target written in place), if any.
func (s *server5) call(c *drive.TensorCall) (*autograd.Tensor, error) {
	if !s.scoped {
		// The program's scope, opened at its first call (a reset records
		// nothing): the tensors' buffers are made in it, backward's
		// gradient buffers too, and end closes it.
		s.scoped = true
		if err := s.e.ScopeEnter(); err != nil {
			return nil, err
		}
	}
	var made *autograd.Tensor
	do := func() error {
		var err error
		made, err = s.dispatch(c)
		return err
	}
	if c.NoGrad {
		err := s.e.NoGrad(do)
		return made, err
	}
	err := do()
	return made, err
}

func (s *server5) dispatch(c *drive.TensorCall) (*autograd.Tensor, error) {
	e := s.e
	operands := func(hs ...int) ([]*autograd.Tensor, error) {
		ts := make([]*autograd.Tensor, len(hs))
		for i, h := range hs {
			t, err := s.tensor(h)
			if err != nil {
				return nil, err
			}
			ts[i] = t
		}
		return ts, nil
	}
	keep := func(t *autograd.Tensor, err error) (*autograd.Tensor, error) {
		if err != nil {
			return nil, err
		}
		s.handles[c.Handle] = t
		return t, nil
	}
	switch c.Op {
	case drive.TensorLeaf:
		return keep(e.Leaf(c.Shape, c.Values, c.RequiresGrad))
	case drive.TensorAdd, drive.TensorSub, drive.TensorMul, drive.TensorDiv, drive.TensorMatmul:
		ts, err := operands(c.A, c.B)
		if err != nil {
			return nil, err
		}
		a, b := ts[0], ts[1]
		switch c.Op {
		case drive.TensorAdd:
			return keep(a.Add(b))
		case drive.TensorSub:
			return keep(a.Sub(b))
		case drive.TensorMul:
			return keep(a.Mul(b))
		case drive.TensorDiv:
			return keep(a.Div(b))
		}
		return keep(a.Matmul(b))
	case drive.TensorNeg, drive.TensorExp, drive.TensorLog, drive.TensorTanh, drive.TensorRelu, drive.TensorSum,
		drive.TensorPow, drive.TensorReshape, drive.TensorSlice, drive.TensorDetach, drive.TensorData:
		ts, err := operands(c.A)
		if err != nil {
			return nil, err
		}
		a := ts[0]
		switch c.Op {
		case drive.TensorNeg:
			return keep(a.Neg())
		case drive.TensorExp:
			return keep(a.Exp())
		case drive.TensorLog:
			return keep(a.Log())
		case drive.TensorTanh:
			return keep(a.Tanh())
		case drive.TensorRelu:
			return keep(a.Relu())
		case drive.TensorSum:
			return keep(a.Sum())
		case drive.TensorPow:
			return keep(a.Pow(c.Exponent))
		case drive.TensorReshape:
			return keep(a.Reshape(c.Shape...))
		case drive.TensorSlice:
			return keep(a.Slice(c.Start, c.Stop))
		case drive.TensorDetach:
			return keep(a.Detach())
		}
		return keep(a.Data())
	case drive.TensorAddInPlace, drive.TensorSubInPlace, drive.TensorMulInPlace, drive.TensorDivInPlace, drive.TensorZero:
		t, err := s.tensor(c.Target)
		if err != nil {
			return nil, err
		}
		if err := s.inplace(c, t); err != nil {
			return nil, err
		}
		return t, nil
	case drive.TensorBackward:
		t, err := s.tensor(c.Target)
		if err != nil {
			return nil, err
		}
		return nil, t.Backward(c.RetainGraph)
	case drive.TensorZeroGrad:
		t, err := s.tensor(c.Target)
		if err != nil {
			return nil, err
		}
		return nil, e.ZeroGrad(t)
	case drive.TensorRetainGrad:
		t, err := s.tensor(c.Target)
		if err != nil {
			return nil, err
		}
		return nil, t.RetainGrad()
	case drive.TensorDrop:
		t, err := s.tensor(c.Target)
		if err != nil {
			return nil, err
		}
		delete(s.handles, c.Target)
		return nil, s.drop(t)
	case drive.TensorEnd:
		return nil, s.end()
	}
	return nil, fmt.Errorf("impldriver: no layer-5 call %q", c.Op)
}

// inplace makes an in-place call on t: by a tensor (B) or by a number.
func (s *server5) inplace(c *drive.TensorCall, t *autograd.Tensor) error {
	if c.Op == drive.TensorZero {
		return t.ZeroInPlace()
	}
	if c.ByScalar {
		switch c.Op {
		case drive.TensorAddInPlace:
			return t.AddScalarInPlace(c.Scalar)
		case drive.TensorSubInPlace:
			return t.SubScalarInPlace(c.Scalar)
		case drive.TensorMulInPlace:
			return t.MulInPlace(c.Scalar)
		}
		return t.DivScalarInPlace(c.Scalar)
	}
	o, err := s.tensor(c.B)
	if err != nil {
		return err
	}
	switch c.Op {
	case drive.TensorAddInPlace:
		return t.AddInPlace(o, 1)
	case drive.TensorSubInPlace:
		return t.SubInPlace(o, 1)
	case drive.TensorMulInPlace:
		return t.MulTensorInPlace(o)
	}
	return t.DivInPlace(o)
}

// drop lets go of the program's reference to t: under PyTorch's lifetime
// the engine frees what nothing refers to any more; under TensorLogic's,
// which frees by scope and graph, the program frees the graph of a
// tensor it lets go of (FreeGraph: the graph upstream of t, which
// nothing will backpropagate through from t; a leaf's frees nothing).
func (s *server5) drop(t *autograd.Tensor) error {
	if s.acfg.Lifetime == autograd.LifetimePyTorch {
		return t.Drop()
	}
	if !t.Alive() {
		return nil
	}
	return s.e.FreeGraph(t)
}

// end drops every handle, the newest first, closes the program's scope
// and ends the run.
func (s *server5) end() error {
	var errs []error
	if s.acfg.Lifetime != autograd.LifetimePyTorch {
		hs := s.held()
		for i := len(hs) - 1; i >= 0; i-- {
			errs = append(errs, s.drop(s.handles[hs[i]]))
		}
	}
	clear(s.handles)
	errs = append(errs, s.e.ScopeExit(), s.e.End())
	return errors.Join(errs...)
}

// held returns the handles held, in order.
func (s *server5) held() []int {
	hs := make([]int, 0, len(s.handles))
	for h := range s.handles {
		hs = append(hs, h)
	}
	slices.Sort(hs)
	return hs
}

// state is what the answer says of t.
func state(t *autograd.Tensor) *drive.TensorState {
	vals, _ := t.Values() // a tensor the call just made or wrote is alive
	return &drive.TensorState{
		Shape:        t.Shape(),
		Values:       vals,
		RequiresGrad: t.RequiresGrad(),
		IsLeaf:       t.IsLeaf(),
		GradFn:       strings.TrimPrefix(t.GradFn(), "torch::autograd::"), // Python's name of the node's type: CopySlices
		Version:      t.Version(),
	}
}

// grads returns the grads of the handles held whose grad is defined, in
// handle order.
func (s *server5) grads() []drive.Grad {
	out := []drive.Grad{}
	for _, h := range s.held() {
		g := s.handles[h].Grad()
		if g == nil {
			continue
		}
		if vals, err := g.Values(); err == nil {
			out = append(out, drive.Grad{Handle: h, Values: vals})
		}
	}
	return out
}
