package traces

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/tlcheck/tlcheck/internal/safetext"
)

// Error is an input error: a place in a trace that could not be read.
//
// Its message names the place first, then what is wrong, for example
//
//	trace.jsonl:12: event 10: field "addr": want a hex string or a non-negative integer, got true
//	line 1: header: field "version": want 1, got 2
//
// With File empty the place starts with "line N"; with Line 0 the line is
// left out. Event -1 is the header (or, in a document, any field beside
// "events").
type Error struct {
	File  string // set by callers that know it
	Line  int    // 1-based; 0 if unknown
	Event int    // event number; -1 for the header
	Field string // the offending field, "" if none
	Err   error
}

func (e *Error) Error() string {
	b := make([]byte, 0, 96)
	switch {
	case e.File != "" && e.Line > 0:
		b = append(b, e.File...)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(e.Line), 10)
		b = append(b, ": "...)
	case e.File != "":
		b = append(b, e.File...)
		b = append(b, ": "...)
	case e.Line > 0:
		b = append(b, "line "...)
		b = strconv.AppendInt(b, int64(e.Line), 10)
		b = append(b, ": "...)
	}
	if e.Event < 0 {
		b = append(b, "header: "...)
	} else {
		b = append(b, "event "...)
		b = strconv.AppendInt(b, int64(e.Event), 10)
		b = append(b, ": "...)
	}
	if e.Field != "" {
		b = append(b, "field "...)
		b = strconv.AppendQuote(b, e.Field)
		b = append(b, ": "...)
	}
	if e.Err != nil {
		b = append(b, e.Err.Error()...)
	} else {
		b = append(b, "unreadable input"...)
	}
	return string(b)
}

func (e *Error) Unwrap() error { return e.Err }

// Kinds of value, as error messages name them after "want".
const (
	wantAddr   = "a hex string or a non-negative integer"
	wantUint   = "a non-negative integer"
	wantInt    = "an integer"
	wantString = "a string"
	wantBool   = "true or false"
	wantThread = "a string or an integer"
	wantSpace  = `"heap" or "device"`
	wantFields = "an array of addresses"
)

// errWant says that a field holds the wrong value: "want W, got G".
func errWant(want string, got []byte) error {
	return fmt.Errorf("want %s, got %s", want, quoteGot(got))
}

// quoteGotBytes is quoteGot for a value that more text will follow.
func quoteGotBytes(got []byte) []byte { return []byte(quoteGot(got)) }

// quoteGot shortens a value for an error message; got is the value's first
// bytes as written ("true", "-1", `"0xzz"`, "{").
func quoteGot(got []byte) string {
	const max = 40
	if len(got) == 0 {
		return "nothing"
	}
	switch got[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return safetext.ClipAt(string(got), max)
}

// errSyntax describes a JSON syntax error at a byte: "want W, got 'c'".
func errSyntax(want string, c int) error {
	return errors.New("invalid JSON: want " + want + ", got " + describeByte(c))
}

func describeByte(c int) string {
	switch {
	case c < 0:
		return "end of input"
	case c == '\n':
		return "end of line"
	case c < 0x20 || c >= 0x7f:
		return fmt.Sprintf("byte 0x%02x", c)
	case c == '\'':
		return `"'"`
	}
	return "'" + string(rune(c)) + "'"
}

// placeError is an error that knows more of its place than where the lexer
// stands: the field, the line an event starts on, or which event it is.
type placeError struct {
	field string
	line  int // 0: the lexer's line
	event int // eventHere: the event being read; -1: the header
	err   error
}

const eventHere = -2

func (e *placeError) Error() string { return e.err.Error() }

// fieldErr is an error about an event's field; line 0 is the lexer's line.
func fieldErr(f field, line int, err error) error {
	if _, ok := err.(*readError); ok {
		return err // the input failed, not the field
	}
	return &placeError{field: f.String(), line: line, event: eventHere, err: err}
}

// headerErr is an error about a header field ("" if none).
func headerErr(name string, err error) error {
	return &placeError{field: name, event: -1, err: err}
}
