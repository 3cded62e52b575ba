package traces

import (
	"math"
	"strconv"
)

// Values of event fields: addresses, integers and strings, and the errors
// that quote a value of the wrong type.

// wantOf is how error messages describe a field's values.
func wantOf(f field) string { return fieldRows[f].want }

// describeOp says which fields an op needs, for "missing" errors.
func describeOp(op Op) string {
	s := op.String() + " needs "
	for i, f := range opSpecs[op].required {
		if i > 0 {
			s += ", "
		}
		s += f.String()
	}
	return s
}

// string reads a string value.
func (r *Reader) string(c int, want string) ([]byte, error) {
	if c != '"' {
		return nil, r.wrongType(want, c)
	}
	return r.lex.readString()
}

// addr reads an address: a hex string or a non-negative integer.
func (r *Reader) addr(c int) (Addr, error) {
	l := &r.lex
	switch {
	case c == '"':
		s, err := l.readString()
		if err != nil {
			return 0, err
		}
		a, ok, over := parseHexAddr(s)
		if !ok {
			return 0, errWant(wantAddr, overGot([]byte(strconv.Quote(string(s))), over))
		}
		return a, nil
	case c == '-' || isDigit(byte(c)):
		n, err := l.readNumber()
		if err != nil {
			return 0, err
		}
		v, ok := n.uint(math.MaxUint64)
		if !ok {
			return 0, errWant(wantAddr, overGot(n.lit, n.integral && !n.neg))
		}
		return Addr(v), nil
	}
	return 0, r.wrongType(wantAddr, c)
}

// uint reads a non-negative integer no larger than max.
func (r *Reader) uint(c int, max uint64) (uint64, error) {
	if c != '-' && !isDigit(byte(c)) {
		return 0, r.wrongType(wantUint, c)
	}
	n, err := r.lex.readNumber()
	if err != nil {
		return 0, err
	}
	v, ok := n.uint(max)
	if !ok {
		if max == math.MaxUint64 {
			return 0, errWant(wantUint, overGot(n.lit, n.integral && !n.neg))
		}
		return 0, errWant(wantUint+" up to "+strconv.FormatUint(max, 10), n.lit)
	}
	return v, nil
}

// addrs reads struct_init's fields: an array of addresses.
func (r *Reader) addrs(ev *Event, c int) error {
	l := &r.lex
	if c != '[' {
		return r.wrongType(wantFields, c)
	}
	ev.Fields = ev.Fields[:0]
	l.r++
	if c = l.skipSpace(); c == ']' {
		l.r++
		return nil
	}
	for {
		a, err := r.addr(c)
		if err != nil {
			return err
		}
		ev.Fields = append(ev.Fields, a)
		switch c = l.skipSpace(); c {
		case ',':
			l.r++
			c = l.skipSpace()
		case ']':
			l.r++
			return nil
		default:
			return l.syntax(", or ]", c)
		}
	}
}

// overGot marks a value that is too large for 64 bits, when over is set
// (the value was of the right kind, so size alone can be at fault).
func overGot(got []byte, over bool) []byte {
	if over {
		got = append(quoteGotBytes(got), " (over 64 bits)"...)
	}
	return got
}

// wrongType reads a value of the wrong type to quote it in the error.
func (r *Reader) wrongType(want string, c int) error {
	l := &r.lex
	switch {
	case c == '"':
		l.r++
		s, over, err := l.readStringSlow(64)
		if err != nil {
			return err
		}
		got := strconv.Quote(string(s))
		if over {
			got = got[:len(got)-1] + `..."`
		}
		return errWant(want, []byte(got))
	case c == '-' || isDigit(byte(c)):
		n, err := l.readNumber()
		if err != nil {
			return err
		}
		return errWant(want, n.lit)
	case c == 't' || c == 'f' || c == 'n':
		b, err := l.readLiteral()
		if err != nil {
			return err
		}
		return errWant(want, []byte(map[byte]string{'t': "true", 'f': "false", 'n': "null"}[b]))
	case c == '{' || c == '[':
		return errWant(want, []byte{byte(c)})
	}
	return l.syntax("a value", c)
}
