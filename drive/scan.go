package drive

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// scanner reads the protocol's small JSON objects in place: the harness
// reads an answer for every call, thousands a second, and encoding/json's
// reflection would cost more than the rest of the harness. It knows just
// enough JSON to walk an object's members, read strings and integers, and
// step over (or take the bytes of) any other value.
type scanner struct {
	b []byte
	i int
}

var errEnd = errors.New("unexpected end of the line")

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return s.want(strconv.QuoteRune(rune(c)))
	}
	s.i++
	return nil
}

func (s *scanner) want(what string) error {
	if s.i >= len(s.b) {
		return fmt.Errorf("want %s: %w", what, errEnd)
	}
	return fmt.Errorf("want %s at byte %d, got %q", what, s.i, s.b[s.i])
}

// object calls member for each key of the object next in the input, with
// the scanner before the key's value, which member must read.
func (s *scanner) object(member func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		key, err := s.rawString()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		s.ws()
		if err := member(key); err != nil {
			return fmt.Errorf("%q: %w", key, err)
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.want("',' or '}'")
		}
	}
}

// array calls elem for each element of the array next in the input.
func (s *scanner) array(elem func() error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		s.ws()
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.want("',' or ']'")
		}
	}
}

// rawString returns the bytes of the string next in the input, quotes
// and escapes included only where it has escapes (see str).
func (s *scanner) rawString() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.want("a string")
	}
	start := s.i
	s.i++
	escaped := false
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			if escaped {
				return s.b[start:s.i], nil
			}
			return s.b[start+1 : s.i-1], nil
		case c == '\\':
			escaped = true
			s.i += 2
		case c < ' ':
			return nil, s.want("no control character in a string")
		default:
			s.i++
		}
	}
	return nil, s.want("the string's closing quote")
}

// str reads a string, unescaping it.
func (s *scanner) str() (string, error) {
	raw, err := s.rawString()
	if err != nil {
		return "", err
	}
	if len(raw) > 0 && raw[0] == '"' { // escaped: rare, leave it to the standard decoder
		var out string
		if err := json.Unmarshal(raw, &out); err != nil {
			return "", err
		}
		return out, nil
	}
	return string(raw), nil
}

// number returns the bytes of the number next in the input.
func (s *scanner) number() []byte {
	s.ws()
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			s.i++
		default:
			return s.b[start:s.i]
		}
	}
	return s.b[start:s.i]
}

// uint reads a non-negative integer below 2^bits.
func (s *scanner) uint(bits int) (uint64, error) {
	lit := s.number()
	n, err := strconv.ParseUint(string(lit), 10, bits)
	if err != nil {
		return 0, fmt.Errorf("want an integer from 0 to 2^%d-1, got %q", bits, lit)
	}
	return n, nil
}

// int reads a non-negative int that fits 31 bits: ids, handles, slots.
func (s *scanner) int() (int, error) {
	n, err := s.uint(31)
	return int(n), err
}

// value returns the bytes of the value next in the input, whatever it is.
func (s *scanner) value() ([]byte, error) {
	s.ws()
	start := s.i
	depth := 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			if _, err := s.rawString(); err != nil {
				return nil, err
			}
		case '{', '[':
			depth++
			s.i++
		case '}', ']':
			if depth == 0 {
				return s.b[start:s.i], nil
			}
			depth--
			s.i++
		case ',':
			if depth == 0 {
				return s.b[start:s.i], nil
			}
			s.i++
		default:
			s.i++
		}
		if depth == 0 && s.i > start && (s.b[s.i-1] == '"' || s.b[s.i-1] == '}' || s.b[s.i-1] == ']') {
			return s.b[start:s.i], nil
		}
		if depth > 64 {
			return nil, errors.New("values nest deeper than 64 levels")
		}
	}
	if depth > 0 || s.i == start {
		return nil, s.want("a value")
	}
	return s.b[start:s.i], nil
}

// end checks that nothing but white space is left.
func (s *scanner) end() error {
	if s.peek() != 0 || s.i < len(s.b) {
		return s.want("the end of the line")
	}
	return nil
}
