package drive

import (
	"fmt"
	"strconv"
)

// tensorBatch is a layer-5 program sent to a driver and not yet answered.
type tensorBatch struct {
	calls   []TensorCall
	first   int64 // the reset's id; call i has first+1+i
	trouble *Trouble
}

// sendTensor writes a layer-5 program to the driver: the reset and the
// calls, in one write, as send does a program of layers 2 and 3.
func (d *Driver) sendTensor(calls []TensorCall) (*tensorBatch, error) {
	if d.broken != nil {
		return nil, fmt.Errorf("drive: the driver is broken: %w", d.broken)
	}
	offers := d.hello.tensorOffers()
	if offers == nil {
		return nil, fmt.Errorf("drive: the driver does not take layer-5 programs (its hello lists layers %v)", d.hello.Layers)
	}
	for i := range calls {
		if !offers[calls[i].Op] {
			return nil, fmt.Errorf("drive: call %d: the driver does not take %s (its hello offers %v)", i, calls[i].Op, d.hello.Calls)
		}
	}
	bt := &tensorBatch{calls: calls, first: d.seq + 1}
	b := d.wbuf[:0]
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, bt.first, 10)
	b = append(b, `,"op":"reset"}`+"\n"...)
	for i := range calls {
		b = calls[i].appendJSON(b, bt.first+1+int64(i))
		b = append(b, '\n')
	}
	d.wbuf = b
	d.seq += 1 + int64(len(calls))
	bt.trouble = d.write(b)
	return bt, nil
}

// receiveTensor reads the answers to a layer-5 program sent, one per
// call, each with its own events. A driver that breaks the protocol, exits
// or hangs is a *Trouble, as in receive.
func (d *Driver) receiveTensor(bt *tensorBatch) ([]Answer, *Trouble) {
	if bt.trouble != nil {
		return nil, bt.trouble
	}
	answers := make([]Answer, 0, len(bt.calls))
	events := 0
	for i := -1; i < len(bt.calls); i++ {
		id := bt.first + 1 + int64(i)
		what := func() string {
			if i < 0 {
				return "the answer to the reset"
			}
			return fmt.Sprintf("the answer to call %d (%s, id %d)", i, bt.calls[i].Op, id)
		}
		line, t := d.readLine(what)
		var a Answer
		if t == nil {
			t = d.parseAnswer(line, &a, id, what)
		}
		if events += len(a.Events); t == nil && events > maxProgramEvents {
			d.kill()
			t = d.trouble(TroubleProtocol, fmt.Sprintf("more than %d events in one program, at %s", maxProgramEvents, what()))
		}
		if t == nil && i < 0 && (a.Refused || len(a.Events) > 0) {
			d.kill()
			t = d.trouble(TroubleProtocol, fmt.Sprintf("the answer to the reset, %s, has events or a refusal", clip(line)))
		}
		if t != nil {
			return answers, t
		}
		if i >= 0 {
			answers = append(answers, a)
		}
	}
	return answers, nil
}

// runTensor runs a layer-5 program on the runner's driver, starting it
// again first if the last run broke it.
func (r *Runner) runTensor(calls []TensorCall) ([]Answer, error) {
	if err := r.ensure(); err != nil {
		return nil, err
	}
	bt, err := r.d.sendTensor(calls)
	if err != nil {
		return nil, err
	}
	answers, t := r.d.receiveTensor(bt)
	if t != nil {
		return answers, t
	}
	return answers, nil
}
