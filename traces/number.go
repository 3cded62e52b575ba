package traces

import (
	"errors"
	"io"
	"math"
	"strconv"
)

// number is a JSON number as the trace fields need it: whether it is an
// integer (JSON Schema's sense: 1.0 and 1e3 are), its sign and magnitude.
type number struct {
	lit      []byte // as written; valid until the next lexer call
	neg      bool   // written with a minus sign (-0 included)
	integral bool   // the value is a whole number
	big      bool   // integral, but the magnitude exceeds math.MaxUint64
	mag      uint64 // the magnitude, when integral and not big
}

// uint returns the number as a non-negative integer no larger than max.
func (n number) uint(max uint64) (uint64, bool) {
	if !n.integral || n.big || n.mag > max || n.neg && n.mag != 0 {
		return 0, false
	}
	return n.mag, true
}

// int64 returns the number as an int64.
func (n number) int64() (int64, bool) {
	switch {
	case !n.integral || n.big:
		return 0, false
	case n.neg && n.mag <= 1<<63:
		return int64(-n.mag), true
	case !n.neg && n.mag <= math.MaxInt64:
		return int64(n.mag), true
	}
	return 0, false
}

// parseNumber checks lit against JSON's number grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and works out its value.
func parseNumber(lit []byte) (number, bool) {
	n := number{lit: lit}
	p := 0
	if p < len(lit) && lit[p] == '-' {
		n.neg = true
		p++
	}
	intStart := p
	switch {
	case p < len(lit) && lit[p] == '0':
		p++
	case p < len(lit) && '1' <= lit[p] && lit[p] <= '9':
		for p < len(lit) && isDigit(lit[p]) {
			p++
		}
	default:
		return n, false
	}
	intEnd := p
	fracStart, fracEnd := p, p
	if p < len(lit) && lit[p] == '.' {
		p++
		fracStart = p
		for p < len(lit) && isDigit(lit[p]) {
			p++
		}
		if p == fracStart {
			return n, false
		}
		fracEnd = p
	}
	exp, expNeg := int64(0), false
	if p < len(lit) && (lit[p] == 'e' || lit[p] == 'E') {
		p++
		if p < len(lit) && (lit[p] == '+' || lit[p] == '-') {
			expNeg = lit[p] == '-'
			p++
		}
		start := p
		for p < len(lit) && isDigit(lit[p]) {
			if exp < 1e12 { // saturate: far beyond any meaningful exponent
				exp = exp*10 + int64(lit[p]-'0')
			}
			p++
		}
		if p == start {
			return n, false
		}
	}
	if p != len(lit) {
		return n, false
	}
	if expNeg {
		exp = -exp
	}
	n.integral, n.big, n.mag = magnitude(lit[intStart:intEnd], lit[fracStart:fracEnd], exp)
	return n, true
}

// magnitude works out digits intDigits.fracDigits × 10^exp exactly: whether
// it is whole, whether it overflows uint64, and its value.
func magnitude(intDigits, fracDigits []byte, exp int64) (integral, big bool, mag uint64) {
	if len(fracDigits) == 0 && exp == 0 && len(intDigits) <= 19 {
		for _, c := range intDigits {
			mag = mag*10 + uint64(c-'0')
		}
		return true, false, mag
	}
	// The significant digits, without leading and trailing zeros, and the
	// power of ten that scales them.
	digits := make([]byte, 0, len(intDigits)+len(fracDigits))
	digits = append(append(digits, intDigits...), fracDigits...)
	scale := exp - int64(len(fracDigits))
	for len(digits) > 0 && digits[0] == '0' {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return true, false, 0
	}
	for digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		scale++
	}
	if scale < 0 {
		return false, false, 0
	}
	if int64(len(digits))+scale > 20 {
		return true, true, 0
	}
	for _, c := range digits {
		d := uint64(c - '0')
		if mag > (math.MaxUint64-d)/10 {
			return true, true, 0
		}
		mag = mag*10 + d
	}
	for ; scale > 0; scale-- {
		if mag > math.MaxUint64/10 {
			return true, true, 0
		}
		mag *= 10
	}
	return true, false, mag
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// parseHexAddr parses "0x" (or "0X") and hex digits. Well-formed but over
// 64 bits is not ok, and over.
func parseHexAddr(b []byte) (a Addr, ok, over bool) {
	if len(b) < 3 || b[0] != '0' || b[1] != 'x' && b[1] != 'X' {
		return 0, false, false
	}
	var v uint64
	for _, c := range b[2:] {
		d := hexDigit[c]
		if d < 0 {
			return 0, false, false
		}
		if v>>60 != 0 {
			over = true
		}
		v = v<<4 | uint64(d)
	}
	return Addr(v), !over, over
}

// hexDigit is the value of a hex digit, -1 for other bytes.
var hexDigit = func() (t [256]int8) {
	for c := range t {
		t[c] = int8(unhex(byte(c)))
	}
	return t
}()

func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// maxNumber is the longest number held: no value of the format needs
// more digits (addresses and sizes have at most 20; a million allows any spelling of them), so a longer one
// where a number is read is an error, and one the format ignores is read
// past (skipNumber).
const maxNumber = 1 << 20

// readNumber reads a number whose first byte ('-' or a digit) is next.
func (l *lexer) readNumber() (number, error) {
	i := l.r
	for i < l.w && isNumberByte(l.buf[i]) {
		i++
	}
	var lit []byte
	if i < l.w {
		lit = l.buf[l.r:i]
		l.r = i
	} else {
		lit = l.scratch[:0]
		for {
			start := l.r
			for l.r < l.w && isNumberByte(l.buf[l.r]) {
				l.r++
			}
			lit = append(lit, l.buf[start:l.r]...)
			if len(lit) > maxNumber {
				l.scratch = lit[:0]
				return number{}, errors.New("invalid JSON: a number of more than " + strconv.Itoa(maxNumber) + " bytes: no value of a trace has so many digits")
			}
			if l.r < l.w || !l.fill() {
				break
			}
		}
		l.scratch = lit[:0]
	}
	n, ok := parseNumber(lit)
	if !ok {
		return n, errors.New("invalid JSON: malformed number " + quoteGot(lit))
	}
	return n, nil
}

// skipNumber reads past a number whose first byte is next, checking its
// syntax as it goes, and keeps nothing.
func (l *lexer) skipNumber() error {
	// The states of JSON's number grammar: -? (0 | [1-9][0-9]*)
	// (. [0-9]+)? ([eE] [+-]? [0-9]+)?
	const (
		start = iota
		minus
		zero
		ints
		dot
		frac
		exp
		expSign
		expDigits
	)
	st := start
	for {
		if l.r == l.w && !l.fill() {
			break
		}
		c := l.buf[l.r]
		next := -1
		switch {
		case c == '-' && st == start:
			next = minus
		case c == '0' && (st == start || st == minus):
			next = zero
		case isDigit(c) && (st == start || st == minus || st == ints):
			next = ints
		case c == '.' && (st == zero || st == ints):
			next = dot
		case isDigit(c) && (st == dot || st == frac):
			next = frac
		case (c == 'e' || c == 'E') && (st == zero || st == ints || st == frac):
			next = exp
		case (c == '+' || c == '-') && st == exp:
			next = expSign
		case isDigit(c) && (st == exp || st == expSign || st == expDigits):
			next = expDigits
		}
		if next < 0 {
			break
		}
		st = next
		l.r++
	}
	if st != zero && st != ints && st != frac && st != expDigits {
		if err := l.readErr(); l.rerr != nil && l.rerr != io.EOF {
			return err
		}
		return errors.New("invalid JSON: malformed number")
	}
	return nil
}
