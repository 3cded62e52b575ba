package traces

import (
	"errors"
	"io"
)

// The lexer: strict JSON tokens read from a refillable buffer. Tokens are
// returned as byte slices into the buffer (or into a scratch slice when a
// token crossed a refill), valid until the next call, so reading a trace
// allocates nothing per token.

const (
	bufSize  = 64 << 10 // read buffer; tokens longer than this still work
	minBuf   = 512      // the least read buffer, for an input that says it is short
	maxDepth = 1000     // deepest nesting of a skipped (unknown) value
)

var (
	errEOF        = errors.New("unexpected end of input")
	errTooDeep    = errors.New("invalid JSON: values nest deeper than 1000 levels")
	errBadUTF8    = errors.New("invalid JSON: a string holds bytes that are not UTF-8")
	errBadLiteral = errors.New("invalid JSON: want true, false or null")
)

type lexer struct {
	src  io.Reader
	buf  []byte
	r, w int   // unread input is buf[r:w]
	off  int64 // input offset of buf[0], counted from where reading began
	line int   // 1-based line of buf[r]
	rerr error // what ended the input: io.EOF, or a read error

	// oneLine makes a newline end the value being read (the stream layout
	// has one value a line); skipSpace then stops at it.
	oneLine bool

	// Capture keeps the bytes read from capStart on, for the one case that
	// cannot stream (see Reader.lookahead).
	capturing bool
	capStart  int
	capture   []byte

	scratch []byte // a string or number that crossed a refill, or had escapes
}

func (l *lexer) reset(src io.Reader, off int64, line int) {
	if l.buf == nil {
		// An input that knows its length (a trace in memory: bytes.Reader,
		// strings.Reader) gets no more buffer than it needs; a harness that
		// reads back thousands of small traces a second would otherwise
		// spend its time clearing 64 KiB for each. fill grows the buffer
		// if a token needs more.
		n := bufSize
		if s, ok := src.(interface{ Len() int }); ok {
			n = min(n, max(s.Len()+1, minBuf))
		}
		l.buf = make([]byte, n)
	}
	l.src, l.r, l.w, l.off, l.line, l.rerr = src, 0, 0, off, line, nil
}

// offset is the input offset of the next unread byte.
func (l *lexer) offset() int64 { return l.off + int64(l.r) }

// fill reads more input after the unread bytes. It reports whether any
// bytes were added; at the end of input (or on a read error, kept in rerr)
// it reports false.
func (l *lexer) fill() bool {
	if l.rerr != nil {
		return false
	}
	if l.r > 0 {
		if l.capturing {
			l.capture = append(l.capture, l.buf[l.capStart:l.r]...)
			l.capStart = 0
		}
		n := copy(l.buf, l.buf[l.r:l.w])
		l.off += int64(l.r)
		l.r, l.w = 0, n
	}
	if l.w == len(l.buf) {
		// The callers consume what they scanned before they refill, so the
		// unread bytes are few; this only keeps Read from getting no room.
		l.buf = append(l.buf, make([]byte, len(l.buf))...)
	}
	for range 100 {
		n, err := l.src.Read(l.buf[l.w:])
		l.w += n
		if err != nil {
			l.rerr = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	l.rerr = io.ErrNoProgress
	return false
}

// need makes sure n bytes are unread, if the input has them.
func (l *lexer) need(n int) bool {
	for l.w-l.r < n {
		if !l.fill() {
			return false
		}
	}
	return true
}

// peek returns the next byte without reading it, or -1 at the end of input.
func (l *lexer) peek() int {
	if l.r < l.w || l.fill() {
		return int(l.buf[l.r])
	}
	return -1
}

// readErr is the error for input that ended early: the read error if one
// ended it, else errEOF.
func (l *lexer) readErr() error {
	if l.rerr != nil && l.rerr != io.EOF {
		return &readError{l.rerr}
	}
	return errEOF
}

type readError struct{ err error }

func (e *readError) Error() string { return "reading the trace: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// syntax is a syntax error at byte c (-1: the end of input).
func (l *lexer) syntax(want string, c int) error {
	if c < 0 {
		if err := l.readErr(); err != errEOF {
			return err
		}
	}
	return errSyntax(want, c)
}

// skipSpace skips white space and returns the next byte, unread (-1 at the
// end of input). Newlines count lines, unless oneLine is set: then it stops
// at a newline and returns it.
func (l *lexer) skipSpace() int {
	if l.r < l.w && l.buf[l.r] > ' ' { // compact JSON, inlined
		return int(l.buf[l.r])
	}
	return l.skipSpaceSlow()
}

func (l *lexer) skipSpaceSlow() int {
	for {
		if l.r >= l.w && !l.fill() {
			return -1
		}
		for l.r < l.w {
			switch c := l.buf[l.r]; c {
			case ' ', '\t', '\r':
				l.r++
			case '\n':
				if l.oneLine {
					return '\n'
				}
				l.line++
				l.r++
			default:
				return int(c)
			}
		}
	}
}

// readLiteral reads true, false or null, whose first byte is next, and
// returns that first byte.
func (l *lexer) readLiteral() (byte, error) {
	c := l.buf[l.r]
	var want string
	switch c {
	case 't':
		want = "true"
	case 'f':
		want = "false"
	default:
		want = "null"
	}
	if !l.need(len(want)) {
		if err := l.readErr(); err != errEOF {
			return 0, err
		}
		return 0, errBadLiteral
	}
	if string(l.buf[l.r:l.r+len(want)]) != want {
		return 0, errBadLiteral
	}
	l.r += len(want)
	return c, nil
}

// skipValue reads and checks one value of any type, keeping nothing.
func (l *lexer) skipValue(depth int) error {
	c := l.skipSpace()
	switch {
	case c == '"':
		return l.skipString()
	case c == '-' || '0' <= c && c <= '9':
		return l.skipNumber()
	case c == 't' || c == 'f' || c == 'n':
		_, err := l.readLiteral()
		return err
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return errTooDeep
		}
		return l.skipContainer(byte(c), depth+1)
	}
	return l.syntax("a value", c)
}

// skipContainer skips an object or array whose opening bracket is next.
func (l *lexer) skipContainer(open byte, depth int) error {
	closer, want := byte(']'), ", or ]"
	if open == '{' {
		closer, want = '}', ", or }"
	}
	l.r++
	if l.skipSpace() == int(closer) {
		l.r++
		return nil
	}
	for {
		if open == '{' {
			if err := l.skipKey(); err != nil {
				return err
			}
		}
		if err := l.skipValue(depth); err != nil {
			return err
		}
		switch c := l.skipSpace(); c {
		case ',':
			l.r++
		case int(closer):
			l.r++
			return nil
		default:
			return l.syntax(want, c)
		}
	}
}

// skipKey reads an object's key and the colon after it.
func (l *lexer) skipKey() error {
	if c := l.skipSpace(); c != '"' {
		return l.syntax("a field name in double quotes", c)
	}
	if err := l.skipString(); err != nil {
		return err
	}
	return l.colon()
}

// colon reads the colon between a key and its value.
func (l *lexer) colon() error {
	if c := l.skipSpace(); c != ':' {
		return l.syntax("':'", c)
	}
	l.r++
	return nil
}
