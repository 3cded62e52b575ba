package traces

import "unicode/utf8"

// Strings: the fast path returns a slice of the read buffer; escapes, bytes
// beyond ASCII and strings that cross a refill take the slow path, which
// decodes into the lexer's scratch slice.

// readString reads a string whose opening quote is the next byte and
// returns its decoded bytes.
func (l *lexer) readString() ([]byte, error) {
	l.r++
	rest := l.buf[l.r:l.w]
	for i, c := range rest {
		if !plain[c] {
			if c != '"' {
				break
			}
			l.r += i + 1
			return rest[:i], nil
		}
	}
	return l.readStringSlow()
}

// plain marks the bytes that stand for themselves in a string, ASCII
// only: the rest (quote, backslash, control and non-ASCII bytes) need the
// slow path.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// readStringSlow decodes escapes, checks UTF-8 and crosses refills.
func (l *lexer) readStringSlow() ([]byte, error) {
	b := l.scratch[:0]
	defer func() { l.scratch = b[:0] }()
	for {
		start := l.r
		for l.r < l.w {
			if c := l.buf[l.r]; c == '"' || c == '\\' || c < 0x20 {
				break
			}
			l.r++
		}
		b = append(b, l.buf[start:l.r]...)
		if l.r == l.w {
			if !l.fill() {
				return nil, l.readErr()
			}
			continue
		}
		switch c := l.buf[l.r]; {
		case c == '"':
			l.r++
			if !utf8.Valid(b) {
				return nil, errBadUTF8
			}
			return b, nil
		case c < 0x20:
			return nil, l.syntax("a character of a string (control characters must be escaped)", int(c))
		}
		l.r++ // the backslash
		e := l.peek()
		if e < 0 {
			return nil, l.readErr()
		}
		l.r++
		switch e {
		case '"', '\\', '/':
			b = append(b, byte(e))
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, err := l.hex4()
			if err != nil {
				return nil, err
			}
			b = utf8.AppendRune(b, l.surrogate(r))
		default:
			return nil, l.syntax(`an escape (\" \\ \/ \b \f \n \r \t \uXXXX)`, e)
		}
	}
}

// hex4 reads the four hex digits of a \u escape.
func (l *lexer) hex4() (rune, error) {
	if !l.need(4) {
		return 0, l.readErr()
	}
	var r rune
	for _, c := range l.buf[l.r : l.r+4] {
		d := unhex(c)
		if d < 0 {
			return 0, l.syntax(`four hex digits after \u`, int(c))
		}
		r = r<<4 | rune(d)
	}
	l.r += 4
	return r, nil
}

// surrogate completes a UTF-16 surrogate pair whose first half is r by
// reading the \u escape of the second half. A half without its partner
// becomes U+FFFD, as in encoding/json.
func (l *lexer) surrogate(r rune) rune {
	if r < 0xD800 || r >= 0xE000 {
		return r
	}
	if r >= 0xDC00 || !l.need(6) || l.buf[l.r] != '\\' || l.buf[l.r+1] != 'u' {
		return 0xFFFD
	}
	var lo rune
	for _, c := range l.buf[l.r+2 : l.r+6] {
		d := unhex(c)
		if d < 0 {
			return 0xFFFD
		}
		lo = lo<<4 | rune(d)
	}
	if lo < 0xDC00 || lo >= 0xE000 {
		return 0xFFFD
	}
	l.r += 6
	return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}
