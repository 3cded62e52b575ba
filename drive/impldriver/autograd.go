package impldriver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

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
		if !s.mute {
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
	mute    bool // reading a tensor for the answer records nothing
	buf     []byte
}

func (s *server5) hello(w *bufio.Writer) error {
	src := "tlcheck impl/autograd (Go) over tlcheck-drive"
	for _, f := range s.cfg.Faults {
		src += ", fault " + string(f)
	}
	_, err := fmt.Fprintf(w, `{"protocol":%q,"version":%d,"layers":[5],"source":%q}`+"\n",
		drive.ProtocolName, drive.ProtocolVersion, src)
	return err
}

// reset throws the program's engine away, recording nothing, and makes a
// fresh one with a scope open: the tensors' buffers have their records
// there, and backward its gradient buffers.
func (s *server5) reset() error {
	s.mute = true
	defer func() { s.mute = false }()
	s.rt = impl.New(s.cfg)
	e, err := autograd.New(s.rt, s.acfg)
	if err != nil {
		return err
	}
	s.e = e
	clear(s.handles)
	if s.handles == nil {
		s.handles = map[int]*autograd.Tensor{}
	}
	return e.ScopeEnter()
}

func (s *server5) serve(line []byte, w *bufio.Writer) error {
	c, err := parseCall5(line)
	if err != nil {
		return fmt.Errorf("impldriver: %q: %w", line, err)
	}
	s.events = s.events[:0]
	var made *autograd.Tensor
	if c.Op == "reset" {
		if err := s.reset(); err != nil {
			return fmt.Errorf("impldriver: reset: %w", err)
		}
	} else {
		made, err = s.call(&c)
	}
	s.mute = true
	b := s.buf[:0]
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, c.ID, 10)
	b = append(b, `,"events":[`...)
	for i := range s.events {
		if i > 0 {
			b = append(b, ',')
		}
		b = traces.AppendEvent(b, &s.events[i])
	}
	b = append(b, ']')
	if err != nil {
		b = append(b, `,"outcome":"refused","message":`...)
		b = strconv.AppendQuote(b, message(err))
	} else {
		b = append(b, `,"outcome":"done"`...)
		if made != nil {
			b = appendTensor(append(b, `,"tensor":`...), made)
		}
		if c.Op == "backward" {
			b = s.appendGrads(append(b, `,"grads":`...))
		}
	}
	b = append(b, "}\n"...)
	s.mute = false
	s.buf = b
	_, err = w.Write(b)
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
		return nil, fmt.Errorf("impldriver: handle %d names no tensor held", h)
	}
	return t, nil
}

// call makes c on the engine; it returns the tensor the answer shows (the
// one made, or the target written in place), if any.
func (s *server5) call(c *call5) (*autograd.Tensor, error) {
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

func (s *server5) dispatch(c *call5) (*autograd.Tensor, error) {
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
	case "leaf":
		return keep(e.Leaf(c.Shape, c.Values, c.RequiresGrad))
	case "add", "sub", "mul", "div", "matmul":
		ts, err := operands(c.A, c.B)
		if err != nil {
			return nil, err
		}
		a, b := ts[0], ts[1]
		switch c.Op {
		case "add":
			return keep(a.Add(b))
		case "sub":
			return keep(a.Sub(b))
		case "mul":
			return keep(a.Mul(b))
		case "div":
			return keep(a.Div(b))
		}
		return keep(a.Matmul(b))
	case "neg", "exp", "log", "tanh", "relu", "sum", "pow", "reshape", "slice", "detach", "data":
		ts, err := operands(c.A)
		if err != nil {
			return nil, err
		}
		a := ts[0]
		switch c.Op {
		case "neg":
			return keep(a.Neg())
		case "exp":
			return keep(a.Exp())
		case "log":
			return keep(a.Log())
		case "tanh":
			return keep(a.Tanh())
		case "relu":
			return keep(a.Relu())
		case "sum":
			return keep(a.Sum())
		case "pow":
			return keep(a.Pow(c.Exponent))
		case "reshape":
			return keep(a.Reshape(c.Shape...))
		case "slice":
			return keep(a.Slice(c.Start, c.Stop))
		case "detach":
			return keep(a.Detach())
		}
		return keep(a.Data())
	case "add_", "sub_", "mul_", "div_", "zero_":
		t, err := s.tensor(c.Target)
		if err != nil {
			return nil, err
		}
		if err := s.inplace(c, t); err != nil {
			return nil, err
		}
		return t, nil
	case "backward":
		t, err := s.tensor(c.Target)
		if err != nil {
			return nil, err
		}
		return nil, t.Backward(c.RetainGraph)
	case "zero_grad":
		t, err := s.tensor(c.Target)
		if err != nil {
			return nil, err
		}
		return nil, e.ZeroGrad(t)
	case "retain_grad":
		t, err := s.tensor(c.Target)
		if err != nil {
			return nil, err
		}
		return nil, t.RetainGrad()
	case "drop":
		t, err := s.tensor(c.Target)
		if err != nil {
			return nil, err
		}
		delete(s.handles, c.Target)
		return nil, s.drop(t)
	case "end":
		return nil, s.end()
	}
	return nil, fmt.Errorf("impldriver: no layer-5 call %q", c.Op)
}

// inplace makes an in-place call on t: by a tensor (B) or by a number.
func (s *server5) inplace(c *call5, t *autograd.Tensor) error {
	if c.Op == "zero_" {
		return t.ZeroInPlace()
	}
	if c.Scalar != nil {
		switch c.Op {
		case "add_":
			return t.AddScalarInPlace(*c.Scalar)
		case "mul_":
			return t.MulInPlace(*c.Scalar)
		}
		return fmt.Errorf("impldriver: %s by a number is not a call", c.Op)
	}
	o, err := s.tensor(c.B)
	if err != nil {
		return err
	}
	switch c.Op {
	case "add_":
		return t.AddInPlace(o, 1)
	case "sub_":
		return t.SubInPlace(o, 1)
	case "mul_":
		return t.MulTensorInPlace(o)
	}
	return t.DivInPlace(o)
}

// drop lets go of the program's reference to t.
func (s *server5) drop(t *autograd.Tensor) error {
	return nil // TODO(lifetime): the engine's drop
}

// end drops every handle, in handle order, closes the program's scope and
// ends the run.
func (s *server5) end() error {
	var errs []error
	for _, h := range s.held() {
		t := s.handles[h]
		delete(s.handles, h)
		errs = append(errs, s.drop(t))
	}
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

// appendTensor appends the answer's tensor object for t.
func appendTensor(b []byte, t *autograd.Tensor) []byte {
	b = append(b, `{"shape":[`...)
	for i, d := range t.Shape() {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(d), 10)
	}
	b = append(b, `],"values":`...)
	vals, _ := t.Values() // a tensor the call just made or wrote is alive
	b = appendFloats(b, vals)
	b = append(b, `,"requires_grad":`...)
	b = strconv.AppendBool(b, t.RequiresGrad())
	b = append(b, `,"is_leaf":`...)
	b = strconv.AppendBool(b, t.IsLeaf())
	b = append(b, `,"grad_fn":`...)
	if fn := t.GradFn(); fn != "" {
		b = strconv.AppendQuote(b, fn)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, int64(t.Version()), 10)
	return append(b, '}')
}

// appendGrads appends the grads of the handles held whose grad is
// defined, in handle order.
func (s *server5) appendGrads(b []byte) []byte {
	b = append(b, '[')
	n := 0
	for _, h := range s.held() {
		g := s.handles[h].Grad()
		if g == nil {
			continue
		}
		vals, err := g.Values()
		if err != nil {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, `{"handle":`...)
		b = strconv.AppendInt(b, int64(h), 10)
		b = appendFloats(append(b, `,"values":`...), vals)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendFloats appends vals as a JSON array, the non-finite values as the
// protocol's strings "nan", "inf" and "-inf".
func appendFloats(b []byte, vals []float64) []byte {
	b = append(b, '[')
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		switch {
		case math.IsNaN(v):
			b = append(b, `"nan"`...)
		case math.IsInf(v, 1):
			b = append(b, `"inf"`...)
		case math.IsInf(v, -1):
			b = append(b, `"-inf"`...)
		default:
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
	}
	return append(b, ']')
}
