// Package safetext makes strings that come from inputs (sites, messages
// that quote them, names) safe to show: on a terminal, where an escape
// sequence in a site could clear the screen or set the window title, and
// in a document that must be valid UTF-8.
//
// Escape rewrites what is not printable as strconv.Quote shows it (\x1b,
// \a, \x00, \u0085, \xff for a byte that is not UTF-8) and leaves the rest
// as it was, so that an ordinary site reads as written. JSON escapes the
// control characters encoding/json leaves raw in valid JSON (DEL and the
// C1 controls), the JSON way. Clip shortens an input that a message
// echoes back to a readable length.
package safetext

import (
	"strconv"
	"unicode/utf8"
)

// Escape returns s with every rune that is not printable (strconv.IsPrint,
// space included as printable) and every byte that is not UTF-8 written as
// strconv.Quote writes it. A string that needs nothing is returned as it
// is, without allocating.
func Escape(s string) string {
	i := firstBad(s)
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\x`...)
			b = append(b, hex[s[i]>>4], hex[s[i]&0xf])
		case printable(r):
			b = append(b, s[i:i+n]...)
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\u0085'
			b = append(b, q[1:len(q)-1]...)
		}
		i += n
	}
	return string(b)
}

const hex = "0123456789abcdef"

// firstBad returns the index of the first byte of s that Escape rewrites,
// or len(s).
func firstBad(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || !printable(r) {
			return i
		}
		i += n
	}
	return len(s)
}

func printable(r rune) bool { return r == ' ' || strconv.IsPrint(r) }

// JSON returns the JSON text b (as encoding/json writes it: valid UTF-8,
// the control characters below U+0020 escaped) with DEL and the C1
// controls (U+0080 to U+009F), which encoding/json writes raw, escaped as
// \u007f and \u0080 to \u009f: the same JSON, safe on a terminal. Those
// bytes can only occur inside strings, so the rewrite is exact. b is
// returned as it is where it holds none.
func JSON(b []byte) []byte {
	i := 0
	for ; i < len(b); i++ {
		if b[i] == 0x7f || b[i] == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] < 0xa0 {
			break
		}
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for ; i < len(b); i++ {
		switch {
		case b[i] == 0x7f:
			out = append(out, `\u007f`...)
		case b[i] == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] < 0xa0:
			out = append(out, `\u00`...)
			out = append(out, hex[b[i+1]>>4], hex[b[i+1]&0xf])
			i++
		default:
			out = append(out, b[i])
		}
	}
	return out
}
