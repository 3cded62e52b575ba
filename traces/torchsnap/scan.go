package torchsnap

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The scan walks a pickle's opcodes before anything is decoded, as
// Python's pickletools.genops does, without building a value. It is what
// makes a snapshot from outside safe to decode: og-rek would turn GLOBAL
// and REDUCE into harmless placeholders, but a snapshot never holds them,
// so they are refused here with a message that says why; lengths are held
// to the bytes that remain, so a declared length of 4 GiB in a 20-byte
// file is an error and not an allocation; and the memory the decoded
// values will take is bounded from above, so that a small pickle that
// pushes millions of empty lists (each byte a Go value of 40 or more
// bytes) is refused before it is built.

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

// refused are the opcodes a snapshot never holds, with why each is refused.
var refused = map[byte]string{
	'c':  "GLOBAL would import a Python name",
	0x93: "STACK_GLOBAL would import a Python name",
	'R':  "REDUCE would call Python code",
	'b':  "BUILD would call Python code (__setstate__)",
	'i':  "INST would import and call a Python class",
	'o':  "OBJ would call a Python class",
	0x81: "NEWOBJ would call a Python class",
	0x92: "NEWOBJ_EX would call a Python class",
	0x82: "EXT1 would import a registered Python name",
	0x83: "EXT2 would import a registered Python name",
	0x84: "EXT4 would import a registered Python name",
	'P':  "PERSID asks the loader for an outside object",
	'Q':  "BINPERSID asks the loader for an outside object",
	0x97: "NEXT_BUFFER needs out-of-band buffers",
	0x98: "READONLY_BUFFER needs out-of-band buffers",
	'1':  "POP_MARK is not written for plain data",
	0x8b: "LONG4 holds an integer of over 255 bytes",
	0x8d: "BINUNICODE8 holds a string of over 4 GiB",
	0x8e: "BINBYTES8 holds bytes of over 4 GiB",
	0x96: "BYTEARRAY8 holds a bytearray, which a snapshot never has",
}

// Costs, in bytes of Go memory, that bound what og-rek builds: a pushed
// value is an interface on the stack and, once stored, a slot in a list
// or a map entry (with room for growth); a memo entry is a map entry with
// a string key; a container is its header and first allocation.
//
// The figures are measured (TestCostBoundsDecoding holds them to what
// og-rek allocates, garbage included, on the shapes that cost most per
// byte) and rounded up.
const (
	costPush      = 192
	costMemo      = 256
	costContainer = 64
	costString    = 32  // a string's header and boxing, its bytes added
	costLong      = 768 // a big.Int, and the decoder's garbage making it
)

// maxLongDigits bounds a protocol-0 LONG: converting decimal text to a
// big integer takes time that grows faster than its length, and a
// snapshot's integers (addresses, sizes, times) fit in 64 bits.
const maxLongDigits = 40

// scanResult is what the scan learned of a well-formed pickle.
type scanResult struct {
	protocol int
	cost     int64 // an upper bound of the memory the decoded values take
}

// scan checks that p is one pickle of plain data and bounds what decoding
// it costs. Its errors name the byte offset and the opcode.
func scan(p []byte) (res scanResult, err error) {
	if len(p) > 0 && p[0] != 0x80 {
		// Protocols 0 and 1 have no PROTO, so such a pickle is read on;
		// but most inputs that fail here are no pickle at all.
		defer func() {
			var e *Error
			if errors.As(err, &e) {
				e.Err = fmt.Errorf("%w (the input does not start with PROTO, byte 0x80, as a pickle of protocol 2 or later does: is it a pickle?)", e.Err)
			}
		}()
	}
	at := 0
	for {
		if at >= len(p) {
			if at == 0 {
				return res, &Error{Err: errors.New("empty input: a pickle starts with PROTO (0x80) and ends with STOP ('.')")}
			}
			return res, &Error{Where: fmt.Sprintf("byte %d", at), Err: errTruncated("the pickle ends without STOP")}
		}
		op := p[at]
		where := fmt.Sprintf("byte %d", at)
		if why, ok := refused[op]; ok {
			return res, &Error{Where: where, Err: fmt.Errorf("opcode %s (0x%02x): a memory snapshot holds only dicts, lists, strings and numbers", why, op)}
		}
		info, ok := accepted[op]
		if !ok {
			return res, &Error{Where: where, Err: fmt.Errorf("unknown pickle opcode 0x%02x: not a pickle, or a damaged one", op)}
		}
		at++
		n, payload, err := argLen(p, at, info)
		if err != nil {
			return res, &Error{Where: where, Err: fmt.Errorf("%s: %w", info.name, err)}
		}
		switch op {
		case 0x80:
			if v := int(p[at]); v > 5 {
				return res, &Error{Where: where, Err: fmt.Errorf("PROTO %d: pickle protocols go up to 5", v)}
			} else {
				res.protocol = v
			}
		case 'L':
			if payload > maxLongDigits {
				return res, &Error{Where: where, Err: fmt.Errorf("LONG of %d digits: a snapshot's integers fit in 64 bits", payload)}
			}
		}
		at += n
		if info.push {
			res.cost += costPush
		}
		if info.memo {
			res.cost += costMemo
		}
		if op == 'a' || op == 'e' {
			res.cost += costMemo / 4 // relink may write a memo entry again
		}
		switch op {
		case '}', ']', ')', 'd', 'l', 't', 0x85, 0x86, 0x87:
			res.cost += costContainer
		case 0x8a, 'L':
			res.cost += costLong
		}
		if info.arg == argLen1 || info.arg == argLen4 || info.arg == argLine {
			res.cost += costString + int64(payload)
		}
		if op == '.' {
			if rest := len(p) - at; rest > 0 {
				return res, &Error{Where: fmt.Sprintf("byte %d", at), Err: fmt.Errorf("%d bytes after the pickle's STOP: a snapshot file holds one pickle", rest)}
			}
			return res, nil
		}
	}
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
