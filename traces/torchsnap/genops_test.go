package torchsnap

import (
	"encoding/binary"
	"fmt"
)

// genops walks a pickle's opcodes as Python's pickletools.genops does,
// without building a value: the tests use it to look at what the Writer
// writes and to hold og-rek to the machine (relinkForOgrek). It was the
// reader's first pass when the reader decoded with og-rek.

// argument kinds of the opcodes the scan accepts.
const (
	argNone  = iota
	argU1    // one byte
	argU2    // two bytes
	argU4    // four bytes
	argU8    // eight bytes (FRAME's length)
	argLine  // text up to a newline (protocol 0)
	argLen1  // a one-byte length, then that many bytes
	argLen4  // a four-byte length, then that many bytes
	argLen8  // an eight-byte length, then that many bytes
	argFloat // eight bytes, big-endian
)

// opInfo describes an opcode the scan accepts.
type opInfo struct {
	name string
	arg  int
	push bool // it pushes a value
	memo bool // it stores into the memo
}

// accepted are the opcodes Python's pickle writes for what a snapshot
// holds: dicts, lists, tuples, strings, bytes, integers, floats, booleans
// and None, in protocols 0 to 5.
var accepted = map[byte]opInfo{
	0x80: {"PROTO", argU1, false, false},
	0x95: {"FRAME", argU8, false, false},
	'.':  {"STOP", argNone, false, false},
	'(':  {"MARK", argNone, true, false},
	'0':  {"POP", argNone, false, false},
	'2':  {"DUP", argNone, true, false},
	'}':  {"EMPTY_DICT", argNone, true, false},
	']':  {"EMPTY_LIST", argNone, true, false},
	')':  {"EMPTY_TUPLE", argNone, true, false},
	'd':  {"DICT", argNone, true, false},
	'l':  {"LIST", argNone, true, false},
	't':  {"TUPLE", argNone, true, false},
	0x85: {"TUPLE1", argNone, true, false},
	0x86: {"TUPLE2", argNone, true, false},
	0x87: {"TUPLE3", argNone, true, false},
	'a':  {"APPEND", argNone, false, false},
	'e':  {"APPENDS", argNone, false, false},
	's':  {"SETITEM", argNone, false, false},
	'u':  {"SETITEMS", argNone, false, false},
	0x94: {"MEMOIZE", argNone, false, true},
	'p':  {"PUT", argLine, false, true},
	'q':  {"BINPUT", argU1, false, true},
	'r':  {"LONG_BINPUT", argU4, false, true},
	'g':  {"GET", argLine, true, false},
	'h':  {"BINGET", argU1, true, false},
	'j':  {"LONG_BINGET", argU4, true, false},
	'N':  {"NONE", argNone, true, false},
	0x88: {"NEWTRUE", argNone, true, false},
	0x89: {"NEWFALSE", argNone, true, false},
	'I':  {"INT", argLine, true, false},
	'J':  {"BININT", argU4, true, false},
	'K':  {"BININT1", argU1, true, false},
	'M':  {"BININT2", argU2, true, false},
	'L':  {"LONG", argLine, true, false},
	0x8a: {"LONG1", argLen1, true, false},
	'F':  {"FLOAT", argLine, true, false},
	'G':  {"BINFLOAT", argFloat, true, false},
	'S':  {"STRING", argLine, true, false},
	'T':  {"BINSTRING", argLen4, true, false},
	'U':  {"SHORT_BINSTRING", argLen1, true, false},
	'V':  {"UNICODE", argLine, true, false},
	'X':  {"BINUNICODE", argLen4, true, false},
	0x8c: {"SHORT_BINUNICODE", argLen1, true, false},
	'B':  {"BINBYTES", argLen4, true, false},
	'C':  {"SHORT_BINBYTES", argLen1, true, false},
}

// argLen returns how many bytes the argument of an opcode at p[at:] takes
// and how long its payload is, holding lengths to what remains.
func argLen(p []byte, at int, info opInfo) (n, payload int, err error) {
	rest := len(p) - at
	need := func(k int) error {
		if rest < k {
			return errTruncated(fmt.Sprintf("its argument needs %d bytes, %d remain", k, rest))
		}
		return nil
	}
	switch info.arg {
	case argNone:
		return 0, 0, nil
	case argU1, argFloat, argU2, argU4, argU8:
		k := map[int]int{argU1: 1, argU2: 2, argU4: 4, argU8: 8, argFloat: 8}[info.arg]
		if err := need(k); err != nil {
			return 0, 0, err
		}
		if info.arg == argU8 { // FRAME: the frame must lie within the input
			if l := binary.LittleEndian.Uint64(p[at:]); l > uint64(rest-8) {
				return 0, 0, errTruncated(fmt.Sprintf("it declares a frame of %d bytes, %d remain", l, rest-8))
			}
		}
		return k, 0, nil
	case argLine:
		for i := at; i < len(p); i++ {
			if p[i] == '\n' {
				return i - at + 1, i - at, nil
			}
		}
		return 0, 0, errTruncated("its argument has no ending newline")
	case argLen1, argLen4, argLen8:
		k := map[int]int{argLen1: 1, argLen4: 4, argLen8: 8}[info.arg]
		if err := need(k); err != nil {
			return 0, 0, err
		}
		var l uint64
		switch k {
		case 1:
			l = uint64(p[at])
		case 4:
			l = uint64(binary.LittleEndian.Uint32(p[at:]))
		default:
			l = binary.LittleEndian.Uint64(p[at:])
		}
		if l > uint64(rest-k) {
			return 0, 0, errTruncated(fmt.Sprintf("it declares %d bytes, %d remain", l, rest-k))
		}
		return k + int(l), int(l), nil
	}
	return 0, 0, fmt.Errorf("unhandled argument kind %d", info.arg)
}

// truncatedError marks an input that ends too soon.
type truncatedError struct{ msg string }

func (e *truncatedError) Error() string { return "truncated: " + e.msg }

func errTruncated(msg string) error { return &truncatedError{msg} }
