package torchsnap

import (
	"encoding/binary"
	"math"
	"math/big"
	"unsafe"
)

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
	0x96: "BYTEARRAY8 holds a bytearray, which a snapshot never has",
	0x8f: "EMPTY_SET makes a set, which a snapshot never has",
	0x90: "ADDITEMS fills a set, which a snapshot never has",
	0x91: "FROZENSET makes a frozenset, which a snapshot never has",
}

// opName names the opcodes whose messages need a name chosen at run time.
func opName(op byte) string {
	switch op {
	case 'd':
		return "DICT"
	case 'l':
		return "LIST"
	case 't':
		return "TUPLE"
	case 'I':
		return "INT"
	case 'L':
		return "LONG"
	case 0x8a:
		return "LONG1"
	}
	return "LONG4"
}

// step runs one opcode other than STOP.
func (m *machine) step(op byte) error {
	switch op {
	case 0x80: // PROTO
		v, err := m.u1("PROTO")
		if err != nil {
			return err
		}
		if v > 5 {
			return m.fail("PROTO %d: pickle protocols go up to 5", v)
		}
	case 0x95: // FRAME: only a hint for reading ahead, but Python's
		// unpickler reads the whole frame first, so it must be there.
		n, err := m.u8("FRAME")
		if err != nil {
			return err
		}
		if n > math.MaxInt64-uint64(m.off) {
			return m.truncated("FRAME declares more bytes than any input holds")
		}
		m.frame = max(m.frame, m.off+int64(n))
	case '(': // MARK
		if len(m.marks) >= m.lim.maxStack {
			return m.fail("more than %d MARKs open: PyTorch never writes such a snapshot", m.lim.maxStack)
		}
		m.marks = append(m.marks, len(m.stack))
	case '0': // POP: a value, or a MARK with nothing after it
		if n := len(m.marks); n > 0 && m.marks[n-1] == len(m.stack) {
			m.marks = m.marks[:n-1]
		} else if _, err := m.pop(1, "POP"); err != nil {
			return err
		}
	case '1': // POP_MARK
		if _, err := m.popMark("POP_MARK"); err != nil {
			return err
		}
	case '2': // DUP
		if len(m.stack) <= m.fence() {
			return m.underflow("DUP")
		}
		return m.push(m.stack[len(m.stack)-1])
	case '}', ']', ')': // EMPTY_DICT, EMPTY_LIST, EMPTY_TUPLE
		k := byte('d')
		switch op {
		case ']':
			k = 'l'
		case ')':
			k = 't'
		}
		v, err := m.newContainer(k)
		if err != nil {
			return err
		}
		return m.push(v)
	case 'd', 'l', 't': // DICT, LIST, TUPLE: of the items after the mark
		items, err := m.popMark(opName(op))
		if err != nil {
			return err
		}
		return m.build(op, items)
	case 0x85, 0x86, 0x87: // TUPLE1, TUPLE2, TUPLE3
		n := int(op - 0x84)
		items, err := m.pop(n, "TUPLE"+string(rune('0'+n)))
		if err != nil {
			return err
		}
		return m.build('t', items)
	case 'a': // APPEND
		if len(m.stack)-1 <= m.fence() {
			return m.underflow("APPEND")
		}
		n := len(m.stack)
		err := m.add(m.stack[n-2], m.stack[n-1:], "APPEND")
		m.stack = m.stack[:n-1]
		return err
	case 'e': // APPENDS
		return m.addMarked("APPENDS")
	case 's': // SETITEM
		if len(m.stack)-2 <= m.fence() {
			return m.underflow("SETITEM")
		}
		n := len(m.stack)
		err := m.add(m.stack[n-3], m.stack[n-2:], "SETITEM")
		m.stack = m.stack[:n-2]
		return err
	case 'u': // SETITEMS
		return m.addMarked("SETITEMS")
	case 0x94, 'p', 'q', 'r': // MEMOIZE, PUT, BINPUT, LONG_BINPUT
		var idx uint32
		switch op {
		case 0x94:
			idx = uint32(m.memo.n)
		case 'p':
			n, err := m.decimal("PUT")
			if err != nil {
				return err
			}
			idx = n
		case 'q':
			n, err := m.u1("BINPUT")
			if err != nil {
				return err
			}
			idx = uint32(n)
		case 'r':
			n, err := m.u4("LONG_BINPUT")
			if err != nil {
				return err
			}
			idx = n
		}
		if len(m.stack) <= m.fence() {
			return m.underflow("a memo store")
		}
		return m.memoPut(idx, m.stack[len(m.stack)-1])
	case 'g', 'h', 'j': // GET, BINGET, LONG_BINGET
		var idx uint32
		switch op {
		case 'g':
			n, err := m.decimal("GET")
			if err != nil {
				return err
			}
			idx = n
		case 'h':
			n, err := m.u1("BINGET")
			if err != nil {
				return err
			}
			idx = uint32(n)
		case 'j':
			n, err := m.u4("LONG_BINGET")
			if err != nil {
				return err
			}
			idx = n
		}
		v, err := m.memoGet(idx)
		if err != nil {
			return err
		}
		return m.push(v)
	case 'N':
		return m.push(val{k: kNone})
	case 0x88:
		return m.push(val{k: kBool, i: 1})
	case 0x89:
		return m.push(val{k: kBool, i: 0})
	case 'J': // BININT
		n, err := m.u4("BININT")
		if err != nil {
			return err
		}
		return m.push(val{k: kInt, i: int64(int32(n))})
	case 'K': // BININT1
		n, err := m.u1("BININT1")
		if err != nil {
			return err
		}
		return m.push(val{k: kInt, i: int64(n)})
	case 'M': // BININT2
		b, err := m.read(2, "BININT2")
		if err != nil {
			return err
		}
		return m.push(val{k: kInt, i: int64(binary.LittleEndian.Uint16(b))})
	case 'I', 'L': // INT, LONG: decimal text
		name := opName(op)
		b, err := m.lineOr(name, maxDigits+8, name+" of more than 40 digits: a snapshot's integers fit in 64 bits")
		if err != nil {
			return err
		}
		v, err := m.textInt(b, op == 'I', name)
		if err != nil {
			return err
		}
		return m.push(v)
	case 0x8a, 0x8b: // LONG1, LONG4: little-endian two's complement
		var n uint64
		if op == 0x8a {
			k, err := m.u1("LONG1")
			if err != nil {
				return err
			}
			n = uint64(k)
		} else {
			k, err := m.u4("LONG4")
			if err != nil {
				return err
			}
			if int32(k) < 0 {
				return m.fail("LONG4 with a negative length")
			}
			n = uint64(k)
		}
		name := opName(op)
		if n > 255 && !m.lim.generic {
			if _, err := m.skipArg(n, name, true, nil); err != nil {
				return err
			}
			return m.push(val{k: kBig})
		}
		if n > 255 {
			// Generic mode: read in pieces, as a string is, so that a
			// length declared beyond the end of the input allocates no
			// more than there is.
			v, err := m.strArg(n, name, true, nil)
			if err != nil {
				return err
			}
			return m.push(m.longVal(unsafe.Slice((*byte)(v.p), v.i)))
		}
		b, err := m.read(int(n), name)
		if err != nil {
			return err
		}
		return m.push(m.longVal(b))
	case 'F': // FLOAT
		b, err := m.lineOr("FLOAT", 64, "")
		if err != nil {
			return err
		}
		f, err := textFloat(b)
		if err != nil {
			return m.fail("FLOAT: %v", err)
		}
		return m.push(val{k: kFloat, i: int64(math.Float64bits(f))})
	case 'G': // BINFLOAT
		b, err := m.read(8, "BINFLOAT")
		if err != nil {
			return err
		}
		return m.push(val{k: kFloat, i: int64(binary.BigEndian.Uint64(b))})
	case 'S': // STRING: a quoted, escaped ASCII string
		b, err := m.lineOr("STRING", maxLine, "")
		if err != nil {
			return err
		}
		s, err := quotedString(b)
		if err != nil {
			return m.fail("STRING: %v", err)
		}
		return m.push(m.textStr(s))
	case 'V': // UNICODE: raw-unicode-escape
		b, err := m.lineOr("UNICODE", maxLine, "")
		if err != nil {
			return err
		}
		s, err := rawUnicodeEscape(b)
		if err != nil {
			return m.fail("UNICODE: %v", err)
		}
		return m.push(m.textStr(s))
	case 'T', 'U': // BINSTRING, SHORT_BINSTRING: ASCII
		var n uint64
		name := "SHORT_BINSTRING"
		if op == 'T' {
			name = "BINSTRING"
			k, err := m.u4(name)
			if err != nil {
				return err
			}
			if int32(k) < 0 {
				return m.fail("BINSTRING with a negative length")
			}
			n = uint64(k)
		} else {
			k, err := m.u1(name)
			if err != nil {
				return err
			}
			n = uint64(k)
		}
		v, err := m.strArg(n, name, false, func(b []byte) error { return checkASCII(b, name) })
		if err != nil {
			return err
		}
		return m.push(v)
	case 'X', 0x8c, 0x8d: // BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
		var n uint64
		var name string
		var err error
		switch op {
		case 'X':
			name = "BINUNICODE"
			var k uint32
			k, err = m.u4(name)
			n = uint64(k)
		case 0x8c:
			name = "SHORT_BINUNICODE"
			var k int
			k, err = m.u1(name)
			n = uint64(k)
		default:
			name = "BINUNICODE8"
			n, err = m.u8(name)
		}
		if err != nil {
			return err
		}
		v, err := m.strArg(n, name, false, func(b []byte) error { return checkUTF8(b, name) })
		if err != nil {
			return err
		}
		return m.push(v)
	case 'B', 'C', 0x8e: // BINBYTES, SHORT_BINBYTES, BINBYTES8
		var n uint64
		var name string
		var err error
		switch op {
		case 'B':
			name = "BINBYTES"
			var k uint32
			k, err = m.u4(name)
			n = uint64(k)
		case 'C':
			name = "SHORT_BINBYTES"
			var k int
			k, err = m.u1(name)
			n = uint64(k)
		default:
			name = "BINBYTES8"
			n, err = m.u8(name)
		}
		if err != nil {
			return err
		}
		v, err := m.strArg(n, name, true, nil)
		if err != nil {
			return err
		}
		return m.push(v)
	default:
		if why, ok := refused[op]; ok {
			return m.fail("opcode %s (0x%02x): a memory snapshot holds only dicts, lists, strings and numbers", why, op)
		}
		return m.fail("unknown pickle opcode 0x%02x: not a pickle, or a damaged one", op)
	}
	return nil
}

// textStr holds a protocol-0 string as strArg holds the others: one
// longer than maxString is not held (kLong), whatever the protocol.
func (m *machine) textStr(s string) val {
	if len(s) > m.lim.maxString && !m.lim.generic {
		return val{k: kLong, i: int64(len(s))}
	}
	return m.strVal(s)
}

// addMarked runs APPENDS or SETITEMS: the items after the mark go into
// the container before it.
func (m *machine) addMarked(name string) error {
	if len(m.marks) == 0 {
		return m.fail("malformed pickle: %s without a MARK before it", name)
	}
	k := m.marks[len(m.marks)-1]
	m.marks = m.marks[:len(m.marks)-1]
	if k <= m.fence() {
		return m.underflow(name)
	}
	err := m.add(m.stack[k-1], m.stack[k:], name)
	m.stack = m.stack[:k]
	return err
}

// add adds items (values for APPEND, key and value pairs for SETITEM) to
// the container to.
func (m *machine) add(to val, items []val, name string) error {
	dict := name == "SETITEM" || name == "SETITEMS"
	if dict && len(items)%2 != 0 {
		return m.fail("malformed pickle: odd number of items for %s", name)
	}
	if len(items) == 0 {
		return nil
	}
	switch to.k {
	case kObj:
		o := to.obj()
		if dict != (o.kind == 'd') {
			return m.fail("malformed pickle: %s to %s", name, typeName(to))
		}
		return m.fill(o, items)
	case kSkip:
		if dict != (byte(to.i) == 'd') {
			return m.fail("malformed pickle: %s to %s", name, typeName(to))
		}
		if dict {
			for j := 0; j < len(items); j += 2 {
				if !hashable(items[j]) {
					return m.fail("a key of this dict is %s, which Python cannot use as a key (it is unhashable)", typeName(items[j]))
				}
			}
		}
		return nil
	case kRead, kEntry, kFrame, kSite:
		return m.fail("%s to %s that tlcheck has read already: PyTorch never changes a value after writing it", name, typeName(to))
	}
	return m.fail("malformed pickle: %s to %s", name, typeName(to))
}

// build runs DICT, LIST or TUPLE: a container of items.
func (m *machine) build(op byte, items []val) error {
	if op == 'd' && len(items)%2 != 0 {
		return m.fail("malformed pickle: odd number of items for DICT")
	}
	// items lie above the stack's top, where the container is pushed:
	// keep them.
	items = append([]val(nil), items...)
	v, err := m.newContainer(op)
	if err != nil {
		return err
	}
	switch v.k {
	case kObj:
		o := v.obj()
		if err := m.fill(o, items); err != nil {
			return err
		}
		if op == 't' {
			o.unhashable = !allHashable(items)
		}
	case kSkip:
		if op == 'd' {
			if err := m.add(v, items, "SETITEMS"); err != nil {
				return err
			}
		}
		if op == 't' && !allHashable(items) {
			v.i |= skipUnhashable
		}
	}
	return m.push(v)
}

// longVal decodes LONG1 or LONG4's bytes.
func (m *machine) longVal(b []byte) val {
	// Drop the bytes that only extend the sign.
	n := len(b)
	for n > 1 && ((b[n-1] == 0 && b[n-2]&0x80 == 0) || (b[n-1] == 0xff && b[n-2]&0x80 != 0)) {
		n--
	}
	switch {
	case n == 0:
		return val{k: kInt}
	case n <= 8:
		var u uint64
		for i := n - 1; i >= 0; i-- {
			u = u<<8 | uint64(b[i])
		}
		if n < 8 && b[n-1]&0x80 != 0 { // negative: extend the sign
			u |= ^uint64(0) << (8 * n)
		}
		return val{k: kInt, i: int64(u)}
	case n == 9 && b[8] == 0:
		return val{k: kUint, i: int64(binary.LittleEndian.Uint64(b))}
	}
	if !m.lim.generic {
		return val{k: kBig}
	}
	// Generic mode: the value itself, for the differential tests.
	mag := make([]byte, n)
	for i := range n {
		mag[n-1-i] = b[i]
	}
	z := new(big.Int).SetBytes(mag)
	if b[n-1]&0x80 != 0 {
		z.Sub(z, new(big.Int).Lsh(big.NewInt(1), uint(8*n)))
	}
	return val{k: kBig, p: unsafe.Pointer(z)}
}
