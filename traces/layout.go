package traces

import (
	"bytes"
	"errors"
	"io"
	"strconv"
)

// The two layouts: the first value is read as a header object; an "events"
// key in it makes the trace a document, and its absence a stream.

// Header fields, as bits of Reader.seen.
const (
	hFormat fieldSet = 1 << iota
	hVersion
	hEffects
	hSource
)

var errHeaderObject = errors.New(`want a JSON object such as {"format":"tlcheck-trace","version":1}`)

// errBOM names a byte-order mark, which editors on Windows add to UTF-8
// files: "got byte 0xef" would leave a person looking for a byte their
// editor does not show them. The format forbids the mark (strict JSON).
var errBOM = errors.New("the input starts with a UTF-8 byte-order mark (bytes EF BB BF), which a trace may not have: save the file as UTF-8 without one")

// readHeader reads the first value. In a stream it reads the header line;
// in a document it stops inside the events array, before the first event.
func (r *Reader) readHeader() error {
	l := &r.lex
	c := l.skipSpace()
	switch {
	case c < 0:
		if err := l.readErr(); err != errEOF {
			return err
		}
		return errors.New("empty input: " + errHeaderObject.Error())
	case c == 0xef && l.need(3) && string(l.buf[l.r:l.r+3]) == "\xef\xbb\xbf":
		return errBOM
	case c != '{':
		return errors.New(errHeaderObject.Error() + ", got " + describeByte(c))
	}
	first := l.line
	l.r++
	if c = l.skipSpace(); c != '}' {
		for {
			if c != '"' {
				return l.syntax("a field name in double quotes", c)
			}
			key, err := l.readKey()
			if err != nil {
				return err
			}
			if string(key) == "events" {
				return r.startEvents()
			}
			if err := r.headerField(key, false); err != nil {
				return err
			}
			if c = l.skipSpace(); c != ',' {
				break
			}
			l.r++
			c = l.skipSpace()
		}
		if c != '}' {
			return l.syntax(", or }", c)
		}
	}
	l.r++
	if l.line != first {
		return errors.New(`a stream's header is one line (a document has an "events" array)`)
	}
	if err := r.checkHeader(); err != nil {
		return err
	}
	l.oneLine = true
	return r.endOfLine("after the header")
}

// startEvents begins a document's events array, whose key has been read. It
// streams at once if format and version came first; otherwise the header
// is still to come and it looks ahead for it.
func (r *Reader) startEvents() error {
	l := &r.lex
	if err := l.colon(); err != nil {
		return err
	}
	if c := l.skipSpace(); c != '[' {
		return headerErr("events", r.wrongType("an array of events", c))
	}
	r.doc = true
	var err error
	if r.seen&(hFormat|hVersion) == hFormat|hVersion {
		err = r.checkHeader()
	} else {
		err = r.lookahead()
	}
	if err != nil {
		return err
	}
	l.r++ // '['
	return nil
}

// lookahead reads past the events array to the header fields after it, then
// goes back to the array's start: by seeking if the input can, or else by
// replaying the array's bytes, captured on the way.
func (r *Reader) lookahead() error {
	l := &r.lex
	start, line := l.offset(), l.line
	if r.seeker == nil {
		l.capturing, l.capStart = true, l.r
	}
	err := r.skipEvents()
	var raw []byte
	if l.capturing {
		raw = append(l.capture, l.buf[l.capStart:l.r]...)
		l.capturing, l.capture = false, nil
	}
	if err != nil {
		return err
	}
	if err := r.readTail(false); err != nil {
		return err
	}
	if err := r.checkHeader(); err != nil {
		return err
	}
	if r.seeker != nil {
		if _, err := r.seeker.Seek(r.base+start, io.SeekStart); err != nil {
			return &readError{err}
		}
		l.reset(l.src, start, line)
	} else {
		l.reset(bytes.NewReader(raw), start, line)
	}
	r.tailRead = true
	if l.peek() != '[' { // the input changed under us
		return errors.New("the input changed while the reader looked ahead")
	}
	return nil
}

// skipEvents checks the syntax of the events array whose '[' is next.
func (r *Reader) skipEvents() error {
	l := &r.lex
	l.r++
	if l.skipSpace() == ']' {
		l.r++
		return nil
	}
	for n := 0; ; n++ {
		if err := l.skipValue(0); err != nil {
			return &placeError{event: n, err: err}
		}
		switch c := l.skipSpace(); c {
		case ',':
			l.r++
		case ']':
			l.r++
			return nil
		default:
			return &placeError{event: n, err: l.syntax(", or ] after an event", c)}
		}
	}
}

// readTail reads a document's fields after the events array, to its end.
// With streamed set the events were already read with the header as it
// stood, so a field there may not change it.
func (r *Reader) readTail(streamed bool) error {
	l := &r.lex
	for {
		c := l.skipSpace()
		if c == '}' {
			l.r++
			break
		}
		if c != ',' {
			return l.syntax(", or } after the events", c)
		}
		l.r++
		if c = l.skipSpace(); c != '"' {
			return l.syntax("a field name in double quotes", c)
		}
		key, err := l.readKey()
		if err != nil {
			return err
		}
		if string(key) == "events" {
			return headerErr("events", errors.New("a document has one events array"))
		}
		if err := r.headerField(key, streamed); err != nil {
			return err
		}
	}
	if c := l.skipSpace(); c >= 0 {
		return errors.New("invalid JSON: unexpected " + describeByte(c) + " after the end of the document")
	}
	if err := l.readErr(); err != errEOF {
		return err
	}
	return nil
}

// headerField reads the value of a header field whose key has been read.
// Unknown fields are skipped. With streamed set, events were already read,
// and effects may no longer change.
func (r *Reader) headerField(key []byte, streamed bool) error {
	l := &r.lex
	if err := l.colon(); err != nil {
		return err
	}
	c := l.skipSpace()
	name := string(key) // the keys below are constants: no allocation
	var err error
	switch name {
	case "format":
		r.seen |= hFormat
		var s []byte
		if s, err = r.string(c, strconv.Quote(FormatName)); err == nil && string(s) != FormatName {
			err = errWant(strconv.Quote(FormatName), []byte(strconv.Quote(string(s))))
		}
	case "version":
		r.seen |= hVersion
		err = r.version(c)
	case "effects":
		r.seen |= hEffects
		var b bool
		if b, err = r.bool(c); err == nil && streamed && b != r.header.Effects {
			err = errors.New(`comes after "events" and changes how they read; write it before "events"`)
		}
		r.header.Effects = b
	case "source":
		r.seen |= hSource
		r.header.Source = ""
		if c == 'n' {
			_, err = l.readLiteral()
			break
		}
		var s []byte
		if s, err = r.string(c, wantString); err == nil {
			r.header.Source = string(s)
		}
	default:
		return l.skipValue(0)
	}
	if err != nil {
		return headerErr(name, err)
	}
	return nil
}

// version reads the version field, which must be 1.
func (r *Reader) version(c int) error {
	if c != '-' && !isDigit(byte(c)) {
		return r.wrongType("1", c)
	}
	n, err := r.lex.readNumber()
	if err != nil {
		return err
	}
	if v, ok := n.uint(Version); !ok || v != Version {
		return errors.New("want 1, got " + quoteGot(n.lit) + ": this reader reads version 1 of the format")
	}
	return nil
}

// bool reads true, false or null (false).
func (r *Reader) bool(c int) (bool, error) {
	if c != 't' && c != 'f' && c != 'n' {
		return false, r.wrongType(wantBool, c)
	}
	b, err := r.lex.readLiteral()
	return b == 't', err
}

// checkHeader checks that format and version were given.
func (r *Reader) checkHeader() error {
	for _, f := range []struct {
		bit  fieldSet
		name string
	}{{hFormat, "format"}, {hVersion, "version"}} {
		if r.seen&f.bit == 0 {
			return headerErr(f.name, errors.New(`missing: a trace's header needs "format":"tlcheck-trace" and "version":1`))
		}
	}
	r.header.Format, r.header.Version = FormatName, Version
	return nil
}
