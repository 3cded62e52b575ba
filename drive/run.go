package drive

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/tlcheck/tlcheck/traces"
)

// Run runs calls as one program on the driver: a reset, then the calls,
// each answer checked against the model as it comes. Calls the driver's
// hello does not offer are an error. A driver that exits, hangs or breaks
// the protocol makes the run's Failure one of Trouble's kinds, and the
// driver unusable (Broken): start another.
func (d *Driver) Run(calls []Call) (*Result, error) {
	b, err := d.send(calls)
	if err != nil {
		return nil, err
	}
	return d.receive(b), nil
}

// RunTensor runs a layer-5 program on the driver (see Driver.Run): a
// reset, then the calls, each answer checked against the model as it
// comes (see PROTOCOL.md, "Layer 5: autograd programs"). A driver whose
// hello does not list layer 5, or calls it does not offer, are an error.
func (d *Driver) RunTensor(calls []TensorCall) (*Result, error) {
	b, err := d.sendTensor(calls)
	if err != nil {
		return nil, err
	}
	return d.receive(b), nil
}

// batch is a program sent to the driver and not yet answered: calls of
// layers 2 and 3, or of layer 5 (tcalls).
type batch struct {
	calls   []Call
	tcalls  []TensorCall
	first   int64 // the reset's id; call i has first+1+i
	trouble *Trouble
}

func (bt *batch) len() int { return len(bt.calls) + len(bt.tcalls) }

func (bt *batch) op(i int) string {
	if bt.tcalls != nil {
		return string(bt.tcalls[i].Op)
	}
	return bt.calls[i].Op.String()
}

// sendTensor writes a layer-5 program to the driver (see send).
func (d *Driver) sendTensor(calls []TensorCall) (*batch, error) {
	if d.broken != nil {
		return nil, fmt.Errorf("drive: the driver is broken: %w", d.broken)
	}
	offers := d.hello.tensorOffers()
	if offers == nil {
		return nil, fmt.Errorf("drive: the driver does not take layer-5 programs (its hello lists layers %v)", d.hello.Layers)
	}
	for i := range calls {
		if !offers[calls[i].Op] {
			return nil, fmt.Errorf("drive: call %d: the driver does not take %s (%s)", i, calls[i].Op, d.hello.offered())
		}
	}
	if calls == nil {
		calls = []TensorCall{} // a layer-5 result has TensorCalls non-nil
	}
	return d.sendBatch(&batch{tcalls: calls}, len(calls), func(b []byte, i int, id int64) []byte {
		return calls[i].appendJSON(b, id)
	}), nil
}

// send writes a program to the driver: the reset and the calls, in one
// write. The driver may still be answering the program before it: the
// protocol lets a harness send ahead (see Runner.Stream).
func (d *Driver) send(calls []Call) (*batch, error) {
	if d.broken != nil {
		return nil, fmt.Errorf("drive: the driver is broken: %w", d.broken)
	}
	for i := range calls {
		if !d.offers[calls[i].Op] {
			return nil, fmt.Errorf("drive: call %d: the driver does not take %v (%s)", i, calls[i].Op, d.hello.offered())
		}
	}
	return d.sendBatch(&batch{calls: calls}, len(calls), func(b []byte, i int, id int64) []byte {
		return calls[i].appendJSON(b, id)
	}), nil
}

// sendBatch writes bt's program, a reset and n calls (call appends the
// i-th, numbered id), in one write, and numbers bt from the reset's id.
func (d *Driver) sendBatch(bt *batch, n int, call func(b []byte, i int, id int64) []byte) *batch {
	bt.first = d.seq + 1
	b := d.wbuf[:0]
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, bt.first, 10)
	b = append(b, `,"op":"reset"}`+"\n"...)
	for i := range n {
		b = call(b, i, bt.first+1+int64(i))
		b = append(b, '\n')
	}
	d.wbuf = b
	d.seq += 1 + int64(n)
	bt.trouble = d.write(b)
	return bt
}

// maxProgramEvents bounds the events of one program's answers, which the
// harness holds until the program ends (see maxAnswerEvents).
const maxProgramEvents = 1 << 16

// receive reads and checks the answers to a batch sent.
func (d *Driver) receive(bt *batch) *Result {
	d.last = d.receiveChecked(bt)
	return d.last
}

func (d *Driver) receiveChecked(bt *batch) *Result {
	c := &d.check
	c.start(d.header(), bt.calls, bt.tcalls)
	if bt.trouble != nil {
		c.trouble(0, bt.trouble)
		return c.res
	}
	var a Answer
	for i := -1; i < bt.len(); i++ {
		id := bt.first + 1 + int64(i)
		what := func() string {
			if i < 0 {
				return "the answer to the reset"
			}
			return fmt.Sprintf("the answer to call %d (%s, id %d)", i, bt.op(i), id)
		}
		line, t := d.readLine(what)
		if t == nil {
			t = d.parseAnswer(line, &a, id, what)
		}
		if t == nil && len(c.res.Trace)+len(a.Events) > maxProgramEvents {
			d.kill()
			t = d.trouble(TroubleProtocol, fmt.Sprintf("more than %d events in one program, at %s", maxProgramEvents, what()))
		}
		if t == nil && i < 0 && (a.Refused || len(a.Events) > 0) {
			t = d.trouble(TroubleProtocol, fmt.Sprintf("the answer to the reset, %s, has events or a refusal", clip(line)))
		}
		if t != nil {
			if last := bt.len() - 1; i < last && (t.Kind == TroubleExit || t.Kind == TroubleTimeout) {
				t.What += outstanding(bt, i)
			}
			c.trouble(max(i, 0), t)
			return c.res
		}
		switch {
		case i >= 0 && bt.tcalls != nil:
			c.answerTensor(i, &a)
		case i >= 0:
			c.answer(i, &a)
		}
	}
	if f := c.res.Failure; f != nil {
		f.Stderr = d.stderr.settled() // shown with every finding, not only a crash's
	}
	return c.res
}

// outstanding says, for a driver that died or hung awaiting the answer to
// line i of bt (-1: the reset) with later lines sent and unanswered, that
// the cause lies among them: a driver that buffers its answers loses
// those it wrote before it died, so the first missing answer need not be
// the call that killed it.
func outstanding(bt *batch, i int) string {
	from := "the reset"
	if i >= 0 {
		from = fmt.Sprintf("call %d (%s)", i, bt.op(i))
	}
	last := bt.len() - 1
	return fmt.Sprintf("; %d lines were sent and not answered, so the cause lies among them, from %s to call %d (%s): a driver that buffers its answers loses those it wrote before it died",
		last-i+1, from, last, bt.op(last))
}

// Broken returns why the driver can no longer be used, or nil.
func (d *Driver) Broken() error {
	if d.broken == nil {
		return nil
	}
	return d.broken
}

func (d *Driver) header() traces.Header {
	return traces.Header{Format: traces.FormatName, Version: traces.Version, Effects: true, Source: d.hello.Source}
}

// parseAnswer reads line as the answer with id want.
func (d *Driver) parseAnswer(line []byte, a *Answer, want int64, what func() string) *Trouble {
	if err := d.parse.parse(line, a); err != nil {
		d.kill()
		return d.trouble(TroubleProtocol, fmt.Sprintf("while waiting for %s it wrote %s, which is not an answer: %v", what(), clip(line), err))
	}
	if a.ID != want {
		d.kill()
		var which string
		switch {
		case a.ID == 0:
			which = "a line it was not given (ids start at 1)"
		case a.ID < want:
			which = "which it had answered already: an answer twice"
		case a.ID <= d.seq:
			which = "which was sent after it: an answer out of order (answers come in the order of the lines sent)"
		default:
			which = fmt.Sprintf("a line it was not given (the ids sent go up to %d)", d.seq)
		}
		return d.trouble(TroubleProtocol, fmt.Sprintf("while waiting for %s it answered id %d, %s", what(), a.ID, which))
	}
	return nil
}

// write writes the batch within the call timeout. A batch larger than a
// pipe's buffer goes from a goroutine, so that a driver that answers before
// it has read everything cannot block both sides; its error, if any, shows
// as the driver's exit or timeout when its answers are read.
func (d *Driver) write(b []byte) *Trouble {
	const pipeBuf = 32 << 10
	if len(b) > pipeBuf {
		b = slices.Clone(b) // the next Run reuses wbuf
		go func() { _ = d.writeNow(b) }()
		return nil
	}
	if err := d.writeNow(b); errors.Is(err, os.ErrDeadlineExceeded) {
		return d.trouble(TroubleTimeout, fmt.Sprintf("it did not read the program sent to its stdin within %v%s", d.cfg.CallTimeout, flagNote(d.cfg.CallTimeoutFlag)))
	} else if err != nil {
		return d.trouble(TroubleExit, "writing the program to its stdin: "+err.Error())
	}
	return nil
}

func (d *Driver) writeNow(b []byte) error {
	if err := d.stdin.SetWriteDeadline(time.Now().Add(d.cfg.CallTimeout)); err != nil {
		return err
	}
	_, err := d.stdin.Write(b)
	return err
}
