package traces

import (
	"errors"
	"io"
)

// Reader reads a trace in either layout (document or stream), one event at a
// time, without holding the trace in memory. It allocates nothing per event
// once warm: tokens are read in place, and repeated strings (sites, names)
// are interned in a bounded cache.
//
// The one case that cannot stream is a document, read from an input that
// cannot seek, whose format or version comes after its events: the events
// array is then held in memory until the header is known (see FORMAT.md).
type Reader struct {
	lex    lexer
	header Header
	pos    Pos
	n      int   // events returned so far: the number of the next one
	err    error // sticky: io.EOF or the *Error that stopped reading
	names  interner

	doc      bool     // document layout
	inArray  bool     // a document's events array has had an event
	tailRead bool     // the document's fields after "events" were read ahead
	seen     fieldSet // header fields given (hFormat, ...)

	seeker io.Seeker // the input, when it can seek back
	base   int64     // the input's offset when reading began
}

// NewReader reads the header from r and returns a Reader positioned before
// the first event. It tells the layouts apart by the first value: an object
// with an "events" array is a document, any other object a stream header.
// It reads its input ahead, in blocks. Errors are *Error values naming
// the place.
//
// If r is an io.Seeker, the reader may seek back (see FORMAT.md,
// "Decisions"); pass the *os.File itself rather than a bufio.Reader around
// it, so that even documents with the header last stream.
func NewReader(r io.Reader) (*Reader, error) {
	rd := &Reader{}
	rd.lex.reset(r, 0, 1)
	if s, ok := r.(io.Seeker); ok {
		if base, err := s.Seek(0, io.SeekCurrent); err == nil {
			rd.seeker, rd.base = s, base
		}
	}
	if err := rd.readHeader(); err != nil {
		return nil, rd.fail(-1, err)
	}
	return rd, nil
}

// Header returns the trace's header.
func (r *Reader) Header() Header { return r.header }

// Pos returns the position of the event last returned by Next. (After an
// error, the *Error gives the place.)
func (r *Reader) Pos() Pos { return r.pos }

// Next reads the next event into ev. It returns io.EOF after the last event,
// or an *Error naming the line, event and field that could not be read; once
// it has returned an error it returns the same error again. Next reuses
// ev.Fields' backing array.
func (r *Reader) Next(ev *Event) error {
	if r.err != nil {
		return r.err
	}
	var err error
	if r.doc {
		err = r.nextInDocument(ev)
	} else {
		err = r.nextInStream(ev)
	}
	if err != nil {
		if err == io.EOF {
			r.err = io.EOF
			return io.EOF
		}
		return r.fail(r.n, err)
	}
	r.n++
	return nil
}

// nextInStream reads the next line that is not blank.
func (r *Reader) nextInStream(ev *Event) error {
	l := &r.lex
	l.oneLine = false
	c := l.skipSpace()
	l.oneLine = true
	switch {
	case c < 0:
		if err := l.readErr(); err != errEOF {
			return err
		}
		return io.EOF
	case c != '{':
		return l.syntax("an event object (a stream has one JSON object a line)", c)
	}
	r.pos = Pos{Event: r.n, Line: l.line}
	if err := r.decodeEvent(ev, l.line); err != nil {
		return err
	}
	return r.endOfLine("after the event")
}

// endOfLine reads the rest of a stream's line, which must be blank.
func (r *Reader) endOfLine(what string) error {
	l := &r.lex
	switch c := l.skipSpace(); c {
	case '\n':
		l.r++
		l.line++
	case -1:
		if err := l.readErr(); err != errEOF {
			return err
		}
	default:
		return errors.New("invalid JSON Lines: unexpected " + describeByte(c) + " " + what + ": a stream has one JSON value a line")
	}
	return nil
}

// nextInDocument reads the next element of the events array.
func (r *Reader) nextInDocument(ev *Event) error {
	l := &r.lex
	c := l.skipSpace()
	switch {
	case c == ']':
		l.r++
		if r.tailRead {
			return io.EOF
		}
		if err := r.readTail(true); err != nil {
			return err
		}
		return io.EOF
	case r.inArray:
		if c != ',' {
			return l.syntax(", or ] after an event", c)
		}
		l.r++
		c = l.skipSpace()
	}
	if c != '{' {
		return l.syntax("an event object", c)
	}
	r.inArray = true
	r.pos = Pos{Event: r.n, Line: l.line}
	return r.decodeEvent(ev, l.line)
}

// fail turns err into the sticky *Error for event n (-1: the header), unless
// err names its own place.
func (r *Reader) fail(n int, err error) error {
	e := &Error{Line: r.lex.line, Event: n, Err: err}
	if pe, ok := err.(*placeError); ok {
		e.Field, e.Err = pe.field, pe.err
		if pe.line > 0 {
			e.Line = pe.line
		}
		if pe.event != eventHere {
			e.Event = pe.event
		}
	}
	r.err = e
	return e
}
