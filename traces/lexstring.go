package traces

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// Strings: the fast path returns a slice of the read buffer; escapes, bytes
// beyond ASCII and strings that cross a refill take the slow path, which
// decodes into the lexer's scratch slice.

// MaxString is the longest string, decoded, that a reader holds: a site,
// a thread, a name, an op. A longer one in a field the format defines is
// an input error naming the line and the field; one in a field the format
// ignores, or an unknown key, is read past without being held. So a line
// costs a reader no more than this, whatever its length (FORMAT.md,
// "Limits").
const MaxString = 1 << 20

// maxKey is the longest key held: no field name is longer, so a longer
// key is an unknown one, read past.
const maxKey = 64

var errLongString = errors.New("a string longer than " + strconv.Itoa(MaxString) + " bytes, the most a trace's string may hold (FORMAT.md, Limits)")

// readString reads a string whose opening quote is the next byte and
// returns its decoded bytes; one longer than MaxString is errLongString.
func (l *lexer) readString() ([]byte, error) {
	l.r++
	rest := l.buf[l.r:l.w]
	for i, c := range rest {
		if !plain[c] {
			if c != '"' || i > MaxString {
				break
			}
			l.r += i + 1
			return rest[:i], nil
		}
	}
	b, over, err := l.readStringSlow(MaxString)
	if err == nil && over {
		err = errLongString
	}
	return b, err
}

// readKey reads a key: nil for one longer than any field name, which is
// read past.
func (l *lexer) readKey() ([]byte, error) {
	l.r++
	rest := l.buf[l.r:l.w]
	for i, c := range rest {
		if !plain[c] {
			if c != '"' || i > maxKey {
				break
			}
			l.r += i + 1
			return rest[:i], nil
		}
	}
	b, over, err := l.readStringSlow(maxKey)
	if over {
		b = nil
	}
	return b, err
}

// skipString reads past a string, checking it, and keeps nothing.
func (l *lexer) skipString() error {
	l.r++
	_, _, err := l.readStringSlow(0)
	return err
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

// readStringSlow decodes escapes, checks UTF-8 and crosses refills, after
// the opening quote. It keeps at most limit bytes: over reports a longer
// string, whose rest was read and checked but not kept.
func (l *lexer) readStringSlow(limit int) (b []byte, over bool, err error) {
	b = l.scratch[:0]
	defer func() { l.scratch = b[:0] }()
	var u utf8Carry
	keep := func(p []byte) {
		if room := limit - len(b); len(p) > room {
			p, over = p[:max(room, 0)], true
		}
		b = append(b, p...)
	}
	for {
		start := l.r
		for l.r < l.w {
			if c := l.buf[l.r]; c == '"' || c == '\\' || c < 0x20 {
				break
			}
			l.r++
		}
		seg := l.buf[start:l.r]
		if !u.valid(seg) {
			return nil, false, errBadUTF8
		}
		keep(seg)
		if l.r == l.w {
			if !l.fill() {
				return nil, false, l.readErr()
			}
			continue
		}
		if u.n > 0 { // a sequence cut by a quote, an escape or a control byte
			return nil, false, errBadUTF8
		}
		switch c := l.buf[l.r]; {
		case c == '"':
			l.r++
			return b, over, nil
		case c < 0x20:
			return nil, false, l.syntax("a character of a string (control characters must be escaped)", int(c))
		}
		l.r++ // the backslash
		e := l.peek()
		if e < 0 {
			return nil, false, l.readErr()
		}
		l.r++
		var one [utf8.UTFMax]byte
		switch e {
		case '"', '\\', '/':
			one[0] = byte(e)
			keep(one[:1])
		case 'b', 'f', 'n', 'r', 't':
			one[0] = map[int]byte{'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[e]
			keep(one[:1])
		case 'u':
			r, err := l.hex4()
			if err != nil {
				return nil, false, err
			}
			keep(utf8.AppendRune(one[:0], l.surrogate(r)))
		default:
			return nil, false, l.syntax(`an escape (\" \\ \/ \b \f \n \r \t \uXXXX)`, e)
		}
	}
}

// utf8Carry checks UTF-8 that arrives in pieces: n bytes of a sequence
// begun at the end of the last piece wait in p.
type utf8Carry struct {
	p [utf8.UTFMax]byte
	n int
}

// valid reports whether seg goes on the UTF-8 so far validly (a sequence
// may stay open at its end).
func (u *utf8Carry) valid(seg []byte) bool {
	for u.n > 0 && len(seg) > 0 {
		u.p[u.n] = seg[0]
		u.n++
		seg = seg[1:]
		if utf8.FullRune(u.p[:u.n]) {
			r, size := utf8.DecodeRune(u.p[:u.n])
			if r == utf8.RuneError && size <= 1 || size != u.n {
				return false
			}
			u.n = 0
		}
	}
	if len(seg) == 0 {
		return true
	}
	// The last few bytes may start a sequence that the next piece ends.
	cut := len(seg)
	for k := 1; k <= 3 && k <= len(seg); k++ {
		if c := seg[len(seg)-k]; c >= 0xC0 {
			if !utf8.FullRune(seg[len(seg)-k:]) {
				cut = len(seg) - k
			}
			break
		} else if c < 0x80 {
			break
		}
	}
	if !utf8.Valid(seg[:cut]) {
		return false
	}
	u.n = copy(u.p[:], seg[cut:])
	return true
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
