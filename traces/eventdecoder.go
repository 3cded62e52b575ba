package traces

import (
	"bytes"
	"errors"
)

// EventDecoder decodes events held one at a time in memory, each a JSON
// object as a trace line holds one, with the Reader's own decoder: the same
// fields, the same checks, the same errors. It is for formats that carry
// trace events inside messages of their own (package drive's protocol
// answers), where a Reader over a whole stream does not fit. A decoder is
// not safe for concurrent use; once warm it allocates nothing per event.
type EventDecoder struct {
	r   Reader
	src bytes.Reader
}

// NewEventDecoder returns a decoder.
func NewEventDecoder() *EventDecoder {
	return &EventDecoder{}
}

// Decode reads obj, which must hold exactly one event object (white space
// around it is fine), into ev, reusing ev.Fields' backing array. Errors
// are *Error values naming the field, with Line 1 and Event 0.
func (d *EventDecoder) Decode(obj []byte, ev *Event) error {
	d.src.Reset(obj)
	l := &d.r.lex
	l.reset(&d.src, 0, 1)
	l.oneLine = false
	if c := l.skipSpace(); c != '{' {
		return d.r.fail(0, l.syntax("an event object", c))
	}
	if err := d.r.decodeEvent(ev, 1); err != nil {
		return d.r.fail(0, err)
	}
	if c := l.skipSpace(); c >= 0 {
		return d.r.fail(0, errors.New("invalid JSON: unexpected "+describeByte(c)+" after the event"))
	}
	return nil
}
