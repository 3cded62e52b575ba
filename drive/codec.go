package drive

import (
	"fmt"
	"strconv"
)

// The protocol's calls are JSON objects with an "id", an "op" and the
// fields the op's row lists. A layer declares its fields once, as rows of
// a codec (callCodec for layers 2 and 3): each row's key, the bit that
// names it in an op's set of fields, and how its value is written and
// read. Writing a call, reading one and naming the fields an op needs are
// all derived from the rows, so a field is added in one place and the
// three cannot disagree.

// fieldSet is a set of a layer's fields, one bit a field.
type fieldSet interface{ ~uint8 | ~uint16 | ~uint32 }

// A fieldRow is one field a call of type C may carry.
type fieldRow[C any, F fieldSet] struct {
	bit F
	key string
	// write appends the field's value; read reads it into the call.
	write func(b []byte, c *C) []byte
	read  func(s *scanner, c *C) error
	// omit, where set, leaves the field out of a line although the op's
	// row lists it (an access's "var" when it has none); such a field is
	// never required of a line read.
	omit func(c *C) bool
}

// codec is one layer's call codec: its field rows, in the order a line
// writes them.
type codec[C any, F fieldSet] struct {
	rows []fieldRow[C, F]
}

// appendFields appends the fields of set that c carries, each as
// `,"key":value`, in the rows' order.
func (k *codec[C, F]) appendFields(b []byte, c *C, set F) []byte {
	for i := range k.rows {
		r := &k.rows[i]
		if set&r.bit == 0 || r.omit != nil && r.omit(c) {
			continue
		}
		b = append(b, `,"`...)
		b = append(b, r.key...)
		b = append(b, `":`...)
		b = r.write(b, c)
	}
	return b
}

// parse reads a call line's object into c: its id (-1 if it has none),
// its op, and each field of the rows, returning the set of those seen.
// Unknown keys are allowed and ignored.
func (k *codec[C, F]) parse(line []byte, c *C) (id int64, op string, seen F, err error) {
	id = -1
	s := scanner{b: line}
	err = s.object(func(key []byte) error {
		switch string(key) {
		case "id":
			n, err := s.uint(63)
			id = int64(n)
			return err
		case "op":
			var err error
			op, err = s.str()
			return err
		}
		for i := range k.rows {
			if r := &k.rows[i]; string(key) == r.key {
				seen |= r.bit
				return r.read(&s, c)
			}
		}
		_, err := s.value()
		return err
	})
	if err == nil {
		err = s.end()
	}
	return id, op, seen, err
}

// required is set less the fields a line may leave out (omit).
func (k *codec[C, F]) required(set F) F {
	for i := range k.rows {
		if r := &k.rows[i]; r.omit != nil {
			set &^= r.bit
		}
	}
	return set
}

// names lists the keys of set, lowest bit first: [handle size].
func (k *codec[C, F]) names(set F) string {
	var out []string
	for bit := F(1); bit != 0 && bit <= set; bit <<= 1 {
		for i := range k.rows {
			if r := &k.rows[i]; set&bit != 0 && r.bit == bit {
				out = append(out, r.key)
			}
		}
	}
	return fmt.Sprint(out)
}

// intField, uintField, stringField and intsField make the rows of the
// common kinds of field, at the call's field that at returns.
func intField[C any, F fieldSet](bit F, key string, at func(*C) *int) fieldRow[C, F] {
	return fieldRow[C, F]{bit: bit, key: key,
		write: func(b []byte, c *C) []byte { return strconv.AppendInt(b, int64(*at(c)), 10) },
		read: func(s *scanner, c *C) (err error) {
			*at(c), err = s.int()
			return err
		}}
}

func uintField[C any, F fieldSet](bit F, key string, at func(*C) *uint64) fieldRow[C, F] {
	return fieldRow[C, F]{bit: bit, key: key,
		write: func(b []byte, c *C) []byte { return strconv.AppendUint(b, *at(c), 10) },
		read: func(s *scanner, c *C) (err error) {
			*at(c), err = s.uint(64)
			return err
		}}
}

// stringField's strings are names and variables, short ASCII, for which
// Go's quoting is JSON's.
func stringField[C any, F fieldSet](bit F, key string, at func(*C) *string) fieldRow[C, F] {
	return fieldRow[C, F]{bit: bit, key: key,
		write: func(b []byte, c *C) []byte { return strconv.AppendQuote(b, *at(c)) },
		read: func(s *scanner, c *C) (err error) {
			*at(c), err = s.str()
			return err
		}}
}

// intsField reads into a slice that is not nil, empty for [].
func intsField[C any, F fieldSet](bit F, key string, at func(*C) *[]int) fieldRow[C, F] {
	return fieldRow[C, F]{bit: bit, key: key,
		write: func(b []byte, c *C) []byte { return appendInts(b, *at(c)) },
		read: func(s *scanner, c *C) error {
			ns := []int{}
			err := s.array(func() error {
				n, err := s.int()
				ns = append(ns, n)
				return err
			})
			*at(c) = ns
			return err
		}}
}
