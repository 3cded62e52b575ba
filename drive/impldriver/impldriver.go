// Package impldriver is a driver of package drive's protocol for the Go
// runtime of package impl: the protocol's second implementation, beside
// the C one in examples/cruntime, and the measure of the protocol's cost
// (the same programs, generator and model as the in-process runs of
// package properties, over a pipe). Serve is the whole driver; a main that
// calls it is examples/impldriver.
//
// ServeAutograd serves the protocol's layer-5 (autograd) programs on the
// engine of package impl/autograd, PyTorch's semantics in Go, so that
// drive's differential check can hold it to real PyTorch call by call
// (the PyTorch driver is examples/torchdriver): its answers carry the
// tensor each call made or wrote and the grads after backward, and its
// refusals the engine's messages, which are PyTorch's words.
package impldriver

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// MaxLine bounds a call line: a longer one is not the protocol.
const MaxLine = 1 << 20

// Serve reads calls from in and answers each on out, against a runtime
// configured by cfg (its faults on; its Record hook is the driver's),
// until in ends. It flushes its answers before it waits for more input,
// as the protocol asks.
func Serve(in io.Reader, out io.Writer, cfg impl.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	s := server{cfg: cfg}
	s.cfg.Record = func(ev traces.Event) { s.events = append(s.events, ev) }
	s.rt = impl.New(s.cfg)
	return loop(in, out, s.hello, s.serve)
}

type server struct {
	cfg     impl.Config
	rt      *impl.Runtime
	handles []traces.Addr
	events  []traces.Event
	fields  []traces.Addr
	buf     []byte
}

func (s *server) hello(w *bufio.Writer) error {
	var calls []string
	for _, l := range []int{2, 3} {
		for _, op := range drive.CallOps(l) {
			calls = append(calls, strconv.Quote(op.String()))
		}
	}
	src := "tlcheck impl (Go) over tlcheck-drive"
	for _, f := range s.cfg.Faults {
		src += ", fault " + string(f)
	}
	// impl's runtime refuses every misuse the model finds (its errors name
	// the kinds), so it asks for programs that misuse it.
	_, err := fmt.Fprintf(w, `{"protocol":%q,"version":%d,"layers":[2,3],"calls":[%s],"source":%q,"misuse":true}`+"\n",
		drive.ProtocolName, drive.ProtocolVersion, strings.Join(calls, ","), src)
	return err
}

func (s *server) serve(line []byte, w *bufio.Writer) error {
	c, id, reset, err := drive.ParseCall(line)
	if err != nil {
		return fmt.Errorf("impldriver: %q: %w", line, err)
	}
	s.events = s.events[:0]
	if reset {
		s.rt = impl.New(s.cfg)
		s.handles = s.handles[:0]
	} else {
		err = s.call(&c)
	}
	b := s.buf[:0]
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"events":[`...)
	for i := range s.events {
		if i > 0 {
			b = append(b, ',')
		}
		b = traces.AppendEvent(b, &s.events[i])
	}
	b = append(b, ']')
	if err == nil {
		b = append(b, `,"outcome":"done"}`...)
	} else {
		b = append(b, `,"outcome":"refused","message":`...)
		b = strconv.AppendQuote(b, err.Error())
		if kinds := kindsOf(err, nil); len(kinds) > 0 {
			b = append(b, `,"kinds":[`...)
			for i, k := range kinds {
				if i > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendQuote(b, string(k))
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	b = append(b, '\n')
	s.buf = b
	_, err = w.Write(b)
	return err
}

// addr is the address the runtime gave handle h (0: NULL, or never made).
func (s *server) addr(h int) traces.Addr {
	if h > 0 && h < len(s.handles) {
		return s.handles[h]
	}
	return 0
}

func (s *server) made(h int, a traces.Addr) {
	for len(s.handles) <= h {
		s.handles = append(s.handles, 0)
	}
	s.handles[h] = a
}

func (s *server) call(c *drive.Call) error {
	rt := s.rt
	switch c.Op {
	case traces.OpScopeEnter:
		return rt.ScopeEnter()
	case traces.OpScopeExit:
		return rt.ScopeExit()
	case traces.OpAlloc:
		a, err := rt.Alloc(c.Size)
		s.made(c.Handle, a)
		return err
	case traces.OpStructInit:
		s.fields = s.fields[:0]
		for _, h := range c.Fields {
			s.fields = append(s.fields, s.addr(h))
		}
		a, err := rt.StructInit(c.Size, s.fields)
		s.made(c.Handle, a)
		return err
	case traces.OpAcquire:
		return rt.Acquire(s.addr(c.Target))
	case traces.OpRelease:
		return rt.Release(s.addr(c.Target))
	case traces.OpRegister:
		return rt.Register(s.addr(c.Target))
	case traces.OpUnregister:
		return rt.Unregister(s.addr(c.Target))
	case traces.OpParamRegister:
		return rt.ParamRegister(c.Name, s.addr(c.Target))
	case traces.OpParamRelease:
		return rt.ParamRelease(c.Name)
	case traces.OpEnd:
		return rt.End()
	case traces.OpFnEnter:
		return rt.FnEnter(c.Slots)
	case traces.OpFnExit:
		return rt.FnExit()
	case traces.OpArenaGet:
		a, err := rt.ArenaGet(c.Slot, c.Size, c.Var)
		s.made(c.Handle, a)
		return err
	case traces.OpRead:
		return rt.Read(s.addr(c.Target), c.Size, c.Var)
	case traces.OpWrite:
		return rt.Write(s.addr(c.Target), c.Size, c.Var)
	}
	return fmt.Errorf("impldriver: no call %v", c.Op)
}

// kindsOf appends the violation kinds of the *impl.Error values in err's
// tree (a call that trips over several things joins them) to out.
func kindsOf(err error, out []traces.Kind) []traces.Kind {
	switch e := err.(type) {
	case *impl.Error:
		return append(out, e.Kind)
	case interface{ Unwrap() []error }:
		for _, w := range e.Unwrap() {
			out = kindsOf(w, out)
		}
	case interface{ Unwrap() error }:
		return kindsOf(e.Unwrap(), out)
	}
	return out
}
