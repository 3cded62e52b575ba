package drive

import (
	"fmt"
	"slices"
	"time"

	"github.com/tlcheck/tlcheck/traces"
)

// Run runs calls as one program on the driver: a reset, then the calls,
// each answer checked against the model as it comes. Calls the driver's
// hello does not offer are an error. A driver that exits, hangs or breaks
// the protocol makes the run's Failure one of Trouble's kinds, and the
// driver unusable (Broken): start another.
func (d *Driver) Run(calls []Call) (*Result, error) {
	if d.broken != nil {
		return nil, fmt.Errorf("drive: the driver is broken: %w", d.broken)
	}
	for i := range calls {
		if !d.offers[calls[i].Op.String()] {
			return nil, fmt.Errorf("drive: call %d: the driver does not take %v (its hello offers %v)", i, calls[i].Op, d.hello.Calls)
		}
	}
	c := &d.check
	c.start(d.header(), calls)
	first := d.seq + 1
	b := d.wbuf[:0]
	b = fmt.Appendf(b, `{"id":%d,"op":"reset"}`+"\n", first)
	for i := range calls {
		b = calls[i].appendJSON(b, first+1+int64(i))
		b = append(b, '\n')
	}
	d.wbuf = b
	d.seq += 1 + int64(len(calls))
	if t := d.write(b); t != nil {
		c.trouble(0, t)
		return c.res, nil
	}
	var a Answer
	for i := -1; i < len(calls); i++ {
		what := "the answer to the reset"
		if i >= 0 {
			what = fmt.Sprintf("the answer to call %d (%v, id %d)", i, calls[i].Op, first+1+int64(i))
		}
		line, t := d.readLine(what)
		if t == nil {
			t = d.parseAnswer(line, &a, first+1+int64(i), what)
		}
		if t == nil && i < 0 && (a.Refused || len(a.Events) > 0) {
			t = d.trouble(TroubleProtocol, fmt.Sprintf("the answer to the reset, %s, has events or a refusal", clip(line)))
		}
		if t != nil {
			c.trouble(max(i, 0), t)
			return c.res, nil
		}
		if i >= 0 {
			c.answer(i, &a)
		}
	}
	return c.res, nil
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
func (d *Driver) parseAnswer(line []byte, a *Answer, want int64, what string) *Trouble {
	if err := d.parse.parse(line, a); err != nil {
		d.kill()
		return d.trouble(TroubleProtocol, fmt.Sprintf("while waiting for %s it wrote %s, which is not an answer: %v", what, clip(line), err))
	}
	if a.ID != want {
		d.kill()
		return d.trouble(TroubleProtocol, fmt.Sprintf("while waiting for %s it answered id %d, a call it was not given", what, a.ID))
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
	if err := d.writeNow(b); err != nil {
		return d.trouble(TroubleExit, "writing to its stdin: "+err.Error())
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
