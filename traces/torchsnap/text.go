package torchsnap

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// The text of protocol 0, and the checks on strings, as Python's
// unpickler reads them. Where Python accepts a form its pickler never
// writes (hex digits or underscores in an INT, say) the reader refuses
// it rather than copy Python's every rule; the differential tests hold
// the reader to never accepting what Python refuses, and to reading what
// both accept as Python does.

// decimal reads PUT's or GET's memo index.
func (m *machine) decimal(name string) (uint32, error) {
	b, err := m.lineOr(name, 16, "")
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(string(b), 10, 32)
	if err != nil || len(b) == 0 || b[0] == '+' {
		return 0, m.fail("%s: memo index %q is not a decimal number below 2^32", name, b)
	}
	return uint32(n), nil
}

// textInt reads INT's or LONG's decimal text: "00" and "01" are INT's
// False and True; LONG may end in 'L'.
func (m *machine) textInt(b []byte, isInt bool, name string) (val, error) {
	if isInt && len(b) == 2 && b[0] == '0' && (b[1] == '0' || b[1] == '1') {
		return val{k: kBool, i: int64(b[1] - '0')}, nil
	}
	// CPython's C unpickler reads any two bytes of value 0 or 1 as a bool
	// ("+0", "-0", "+1" too), its Python unpickler only "00" and "01":
	// Python's pickler writes no sign there, so neither reading is taken.
	if isInt && len(b) == 2 && (b[0] == '+' || b[0] == '-') && (b[1] == '0' || b[1] == '1') && string(b) != "-1" {
		return val{}, m.fail("%s %q: PyTorch never writes it, and Python's two unpicklers read it differently (a bool, an int)", name, b)
	}
	if !isInt && len(b) > 0 && b[len(b)-1] == 'L' {
		b = b[:len(b)-1]
	}
	digits := b
	if len(digits) > 0 && (digits[0] == '-' || digits[0] == '+') {
		digits = digits[1:]
	}
	ok := len(digits) > 0
	for _, c := range digits {
		ok = ok && c >= '0' && c <= '9'
	}
	// Python reads the text as int(text, 0): "007" is an error there.
	if !ok || (len(digits) > 1 && digits[0] == '0' && !allZero(digits)) {
		return val{}, m.fail("%s %q is not a decimal integer", name, b)
	}
	if len(digits) > maxDigits {
		return val{}, m.fail("%s of more than %d digits: a snapshot's integers fit in 64 bits", name, maxDigits)
	}
	if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
		return val{k: kInt, i: n}, nil
	}
	if b[0] != '-' {
		if u, err := strconv.ParseUint(string(digits), 10, 64); err == nil {
			return val{k: kUint, i: int64(u)}, nil
		}
	}
	if !m.lim.generic {
		return val{k: kBig}, nil
	}
	z, _ := new(big.Int).SetString(string(b), 10)
	return val{k: kBig, p: unsafe.Pointer(z)}, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != '0' {
			return false
		}
	}
	return true
}

// textFloat reads FLOAT's text, as repr writes a float.
func textFloat(b []byte) (float64, error) {
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9', c == '.', c == '-', c == '+', c == 'e', c == 'E':
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z': // inf, nan
			if c == 'x' || c == 'X' || c == 'p' || c == 'P' {
				return 0, fmt.Errorf("%q is not a decimal float", b)
			}
		default:
			return 0, fmt.Errorf("%q is not a decimal float", b)
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if errors.Is(err, strconv.ErrRange) && math.IsInf(f, 0) {
		// Python refuses it too (OverflowError); "inf" is read.
		return 0, fmt.Errorf("%q is beyond the range of a float", b)
	}
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%q is not a decimal float", b)
	}
	return f, nil
}

// quotedString reads STRING's argument: quoted, with Python's escapes,
// and ASCII (Python 3 reads it with the encoding "ASCII").
func quotedString(b []byte) (string, error) {
	if len(b) < 2 || b[0] != b[len(b)-1] || (b[0] != '\'' && b[0] != '"') {
		return "", errors.New("the argument must be quoted")
	}
	b = b[1 : len(b)-1]
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i == len(b) {
			return "", errors.New(`trailing \ in string`)
		}
		switch c = b[i]; c {
		case '\n':
		case '\\', '\'', '"':
			out = append(out, c)
		case 'a':
			out = append(out, 7)
		case 'b':
			out = append(out, 8)
		case 'f':
			out = append(out, 12)
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'v':
			out = append(out, 11)
		case 'x':
			if i+2 >= len(b) {
				return "", fmt.Errorf(`invalid \x escape at position %d`, i-1)
			}
			h, l := unhex(b[i+1]), unhex(b[i+2])
			if h < 0 || l < 0 {
				return "", fmt.Errorf(`invalid \x escape at position %d`, i-1)
			}
			out = append(out, byte(h<<4|l))
			i += 2
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for k := 0; k < 2 && i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '7'; k++ {
				i++
				v = v*8 + int(b[i]-'0')
			}
			out = append(out, byte(v))
		default:
			out = append(out, '\\', c)
		}
	}
	if err := checkASCII(out, "STRING"); err != nil {
		return "", err
	}
	return string(out), nil
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// rawUnicodeEscape decodes UNICODE's argument as Python's
// raw-unicode-escape codec does: each byte is a code point (Latin-1)
// except \uXXXX and \UXXXXXXXX. The result is UTF-8, with surrogates
// encoded as Python's "surrogatepass" would.
func rawUnicodeEscape(b []byte) (string, error) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 == len(b) {
			out = appendCode(out, rune(c))
			continue
		}
		i++
		c = b[i]
		n := 0
		switch c {
		case 'u':
			n = 4
		case 'U':
			n = 8
		default:
			out = append(out, '\\')
			out = appendCode(out, rune(c))
			continue
		}
		var r rune
		for k := 0; k < n; k++ {
			if i+1 >= len(b) || unhex(b[i+1]) < 0 {
				return "", fmt.Errorf(`truncated \%c escape`, c)
			}
			i++
			r = r<<4 | rune(unhex(b[i]))
		}
		if r > utf8.MaxRune || r < 0 {
			return "", errors.New(`\Uxxxxxxxx out of range`)
		}
		out = appendCode(out, r)
	}
	return string(out), nil
}

// appendCode appends r's UTF-8, surrogates included.
func appendCode(b []byte, r rune) []byte {
	if r >= 0xD800 && r <= 0xDFFF {
		return append(b, 0xED, byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
	}
	return utf8.AppendRune(b, r)
}

func checkASCII(b []byte, name string) error {
	for i, c := range b {
		if c >= 0x80 {
			return fmt.Errorf("%s: byte %d of the string is 0x%02x, not ASCII (Python 3 reads such strings as ASCII, and refuses this one)", name, i, c)
		}
	}
	return nil
}

// checkUTF8 checks a string's bytes as Python's pickle decodes them:
// UTF-8 with "surrogatepass", which also admits U+D800 to U+DFFF.
func checkUTF8(b []byte, name string) error {
	if utf8.Valid(b) {
		return nil
	}
	var u utf8Stream
	return u.check(b, true, name)
}

// utf8Stream checks UTF-8 that arrives in pieces.
type utf8Stream struct {
	pend  [4]byte // a sequence begun at the end of the last piece
	npend int
	off   int // bytes fed before this piece
}

func (u *utf8Stream) check(b []byte, final bool, name string) error {
	bad := func(at int) error {
		return fmt.Errorf("%s: invalid UTF-8 at byte %d of the string (Python's pickle refuses it too)", name, at)
	}
	i := 0
	for u.npend > 0 && i < len(b) {
		u.pend[u.npend] = b[i]
		u.npend++
		i++
		switch utf8Seq(u.pend[:u.npend]) {
		case 0:
			return bad(u.off - (u.npend - i))
		case -1:
		default:
			u.npend = 0
		}
	}
	for i < len(b) {
		if b[i] < 0x80 {
			i++
			continue
		}
		n := utf8Seq(b[i:])
		if n == 0 {
			return bad(u.off + i)
		}
		if n < 0 {
			u.npend = copy(u.pend[:], b[i:])
			break
		}
		i += n
	}
	u.off += len(b)
	if final && u.npend > 0 {
		return bad(u.off - u.npend)
	}
	return nil
}

// utf8Seq returns the length of the UTF-8 sequence that b starts with: 0
// if it is invalid, -1 if b ends inside one that is valid so far.
func utf8Seq(b []byte) int {
	c := b[0]
	n := 0
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c < 0x80:
		return 1
	case c < 0xC2:
		return 0
	case c < 0xE0:
		n = 2
	case c < 0xF0:
		n = 3
		if c == 0xE0 {
			lo = 0xA0 // no overlong forms; 0xED admits surrogates
		}
	case c < 0xF5:
		n = 4
		if c == 0xF0 {
			lo = 0x90
		} else if c == 0xF4 {
			hi = 0x8F
		}
	default:
		return 0
	}
	for k := 1; k < n; k++ {
		if k >= len(b) {
			return -1
		}
		d := b[k]
		if k == 1 && (d < lo || d > hi) || k > 1 && (d < 0x80 || d > 0xBF) {
			return 0
		}
	}
	return n
}
