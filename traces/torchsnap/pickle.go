package torchsnap

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unsafe"
)

// The machine runs a pickle's opcodes as Python's pickle.Unpickler does,
// one at a time from a stream, for the opcodes of plain data: no opcode
// that imports or calls Python code is run, only refused. It holds what
// Python's unpickler holds (the stack, the marks, the memo), but not the
// values it builds: a container is made with the role the snapshot gives
// its place (shape.go), and a container of a known role keeps only what
// tlcheck reads of it (an entry's fields, a frames list's site), or
// nothing at all where the format ignores the place. So memory grows with
// what the memo and the stack hold, not with the pickle.
//
// Why not a general unpickler (github.com/kisielk/og-rek, which tlcheck
// used before): it builds every value, as map[any]any and []any. On a
// 31.5 MB snapshot of 60,000 entries of 12 frames, og-rek's Decode alone
// took 3.2 s of CPU and a peak RSS of 396 MB where Python's pickle.load
// took 0.76 s and 201 MB (the same machine, one after the other), so no
// reader built on it could come within Python's time, nor half its
// memory; this machine's replay of the same file, checking included, took
// 0.77 s and 92 MB. The tests hold the machine to og-rek and to Python's
// pickle (TestPickleMutants, and the fuzz target in differential_test.go).

// kind is the kind of a value on the machine's stack or in its memo.
type kind uint8

const (
	kNone  kind = iota
	kBool       // i: 0 or 1
	kInt        // i: the value
	kUint       // i: the bits of a value above math.MaxInt64
	kBig        // an integer beyond 64 bits; p: *big.Int in generic mode
	kFloat      // i: the bits
	kStr        // p, i: the UTF-8 bytes (surrogates allowed, as Python's pickle allows them)
	kLong       // a str or bytes over Limits.MaxString, skipped; i: its length
	kBytes      // p, i: the bytes (generic mode); i alone otherwise
	kObj        // p: *obj, a container tlcheck holds
	kSkip       // a container in a place the format ignores; i: its kind ('l', 'd', 't'), with skipUnhashable
	kEntry      // a trace entry, read: i indexes Reader.ents
	kFrame      // a frame, read: i indexes Reader.frames
	kSite       // a frames list, read: i is its stack (an index of shaper.stacks, or -1)
	kBlock      // a block, read: i indexes shaper.blocks
	kTrace      // a device's trace, read: i indexes shaper.traces
	kRead       // a list or dict read whose contents are no longer held; i: its role
)

// skipUnhashable marks a skipped tuple that holds an unhashable value.
const skipUnhashable = 1 << 8

// val is one value of the stack or the memo: 24 bytes, so that the memo
// of a large snapshot stays small.
type val struct {
	k kind
	i int64
	p unsafe.Pointer
}

func (v val) str() string { return unsafe.String((*byte)(v.p), int(v.i)) }
func (v val) obj() *obj   { return (*obj)(v.p) }

// A str's bytes are followed by strTail bytes where the reader keeps what
// it learned of the string (shaper.hides, shaper.fileID): every reference
// to one str (the memo hands out the same one) shares them, so that what
// is learned once is not learned again, and nothing is kept in a table
// that would outlive the string.
const strTail = 8

// newStr makes a str of b. Short strs are made once for each content
// while the table of them is small: Python's pickler writes a str once
// for each str object, and a program makes many objects of one content
// (a function's name in each frame).
func (m *machine) newStr(b []byte) val {
	short := len(b) <= maxShared
	if short {
		if v, ok := m.strs[string(b)]; ok {
			return v
		}
	}
	buf := make([]byte, len(b)+strTail)
	copy(buf, b)
	v := val{k: kStr, i: int64(len(b)), p: unsafe.Pointer(&buf[0])}
	if short && len(m.strs) < maxStrs {
		if m.strs == nil {
			m.strs = make(map[string]val)
		}
		m.strs[v.str()] = v
	}
	return v
}

const (
	maxShared = 128     // longest str made once for each content
	maxStrs   = 1 << 16 // most such strs
)

func (m *machine) strVal(s string) val { return m.newStr(unsafe.Slice(unsafe.StringData(s), len(s))) }

// tail returns a str's tail bytes.
func (v val) tail() *[strTail]byte { return (*[strTail]byte)(unsafe.Add(v.p, v.i)) }

// limits are the machine's bounds; see Limits for what they mean to a user.
type limits struct {
	maxString int   // longest str or bytes held; longer ones are skipped (kLong)
	maxStack  int   // most values on the stack
	maxHeld   int   // most values held in generic containers
	maxBytes  int64 // longest pickle read; 0: no limit
	generic   bool  // hold every value (the differential tests)
}

const (
	defaultMaxString = 64 << 10
	defaultMaxStack  = 1 << 17
	defaultMaxHeld   = 1 << 18
	// memoSlack and memoPerByte bound the memo: one entry for every
	// memoPerByte bytes read, beyond memoSlack. Python's pickler memoizes
	// each container and each string once, and each takes more than 8
	// bytes in a snapshot (an entry dict well over 20, with its keys).
	memoSlack   = 1 << 16
	memoPerByte = 8
	// maxDigits bounds a protocol-0 INT or LONG: converting decimal text
	// to an integer takes time that grows faster than its length, and a
	// snapshot's integers (addresses, sizes, times) fit in 64 bits.
	maxDigits = 40
	// maxLine bounds the other protocol-0 text arguments (UNICODE,
	// STRING, FLOAT, PUT, GET): Python 3 writes protocol 4 or 5.
	maxLine = 1 << 20
)

// machine is one run of a pickle.
type machine struct {
	in    *bufio.Reader
	off   int64 // bytes read
	at    int64 // offset of the opcode being run
	lim   limits
	stack []val
	marks []int
	memo  memo
	held  int            // values held in generic containers
	frame int64          // where the last FRAME said the input goes on to, at least
	sh    *shaper        // the snapshot's shape; nil in generic mode
	strs  map[string]val // short strs by content (newStr)
	buf   []byte
}

// pickleError is an error of the pickle itself, at the opcode at byte at.
func (m *machine) fail(format string, args ...any) error {
	return &Error{Where: fmt.Sprintf("byte %d", m.at), Err: fmt.Errorf(format, args...)}
}

func (m *machine) truncated(what string) error {
	return m.fail("truncated: %s", what)
}

// run runs the pickle to its STOP and returns the value it leaves.
func (m *machine) run() (val, error) {
	for {
		m.at = m.off
		if m.lim.maxBytes > 0 && m.off > m.lim.maxBytes {
			return val{}, &Error{Err: fmt.Errorf("the snapshot is larger than %d bytes, the most tlcheck reads", m.lim.maxBytes)}
		}
		op, err := m.in.ReadByte()
		if err != nil {
			if m.off == 0 {
				if err == io.EOF {
					return val{}, &Error{Err: errors.New("empty input: a pickle starts with PROTO (0x80) and ends with STOP ('.')")}
				}
				return val{}, fmt.Errorf("reading the snapshot: %w", err)
			}
			return val{}, m.readErr(err, "the pickle ends without STOP")
		}
		m.off++
		if op == '.' {
			return m.stop()
		}
		if err := m.step(op); err != nil {
			if m.at == 0 && op != 0x80 {
				var e *Error
				if errors.As(err, &e) {
					e.Err = fmt.Errorf("%w (the input does not start with PROTO, byte 0x80, as a pickle of protocol 2 or later does: is it a pickle?)", e.Err)
				}
			}
			return val{}, err
		}
	}
}

// readErr turns a failed read into a truncation (at the end of the input)
// or the reader's own error.
func (m *machine) readErr(err error, what string) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return m.truncated(what)
	}
	return fmt.Errorf("reading the snapshot: %w", err)
}

// stop runs STOP: the value on top is the pickle's, and nothing may follow.
func (m *machine) stop() (val, error) {
	if len(m.stack) <= m.fence() {
		return val{}, m.fail("STOP with nothing on the stack")
	}
	v := m.stack[len(m.stack)-1]
	if _, err := m.in.ReadByte(); err != io.EOF {
		if err != nil {
			return val{}, fmt.Errorf("reading the snapshot: %w", err)
		}
		n, _ := io.Copy(io.Discard, m.in)
		return val{}, &Error{Where: fmt.Sprintf("byte %d", m.off), Err: fmt.Errorf("%d bytes after the pickle's STOP: a snapshot file holds one pickle", n+1)}
	}
	if m.frame > m.off {
		return val{}, m.truncated(fmt.Sprintf("a FRAME declares %d bytes more than the input holds", m.frame-m.off))
	}
	return v, nil
}

// fence is the lowest stack index an opcode may pop: values below the
// last mark belong to an enclosing container.
func (m *machine) fence() int {
	if len(m.marks) == 0 {
		return 0
	}
	return m.marks[len(m.marks)-1]
}

func (m *machine) push(v val) error {
	if len(m.stack) >= m.lim.maxStack {
		return m.fail("more than %d values on the pickle's stack: PyTorch never writes such a snapshot", m.lim.maxStack)
	}
	m.stack = append(m.stack, v)
	return nil
}

func (m *machine) underflow(name string) error {
	return m.fail("malformed pickle: %s with too few values on the stack", name)
}

// pop pops n values above the fence.
func (m *machine) pop(n int, name string) ([]val, error) {
	if len(m.stack)-n < m.fence() {
		return nil, m.underflow(name)
	}
	vs := m.stack[len(m.stack)-n:]
	m.stack = m.stack[:len(m.stack)-n]
	return vs, nil
}

// popMark pops the values above the last mark, and the mark.
func (m *machine) popMark(name string) ([]val, error) {
	if len(m.marks) == 0 {
		return nil, m.fail("malformed pickle: %s without a MARK before it", name)
	}
	k := m.marks[len(m.marks)-1]
	m.marks = m.marks[:len(m.marks)-1]
	vs := m.stack[k:]
	m.stack = m.stack[:k]
	return vs, nil
}

// read returns the next n bytes, valid until the next read. Its callers
// ask for no more than the buffer holds (strArg reads longer strings in
// pieces), so that a length the input declares is never allocated ahead.
func (m *machine) read(n int, name string) ([]byte, error) {
	b, err := m.in.Peek(n)
	if err == bufio.ErrBufferFull {
		if cap(m.buf) < n {
			m.buf = make([]byte, n)
		}
		b = m.buf[:n]
		var k int
		k, err = io.ReadFull(m.in, b)
		m.off += int64(k)
		if err != nil {
			return nil, m.readErr(err, fmt.Sprintf("%s needs %d bytes, %d remain", name, n, k))
		}
		return b, nil
	}
	if err != nil {
		return nil, m.readErr(err, fmt.Sprintf("%s needs %d bytes, %d remain", name, n, len(b)))
	}
	m.in.Discard(n)
	m.off += int64(n)
	return b, nil
}

func (m *machine) u1(name string) (int, error) {
	b, err := m.read(1, name)
	if err != nil {
		return 0, err
	}
	return int(b[0]), nil
}

func (m *machine) u4(name string) (uint32, error) {
	b, err := m.read(4, name)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (m *machine) u8(name string) (uint64, error) {
	b, err := m.read(8, name)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// lineOr reads a protocol-0 text argument up to its newline, which is
// not returned. One longer than max is an error, tooLong or a message
// that says so, and is not read further: its length costs nothing.
func (m *machine) lineOr(name string, max int, tooLong string) ([]byte, error) {
	m.buf = m.buf[:0]
	for {
		b, err := m.in.ReadSlice('\n')
		m.off += int64(len(b))
		if len(m.buf)+len(b) > max+1 {
			if tooLong != "" {
				return nil, m.fail("%s", tooLong)
			}
			return nil, m.fail("%s: its text is longer than %d bytes: a snapshot holds no such value", name, max)
		}
		if err == nil {
			if len(m.buf) == 0 {
				return b[:len(b)-1], nil
			}
			m.buf = append(m.buf, b...)
			return m.buf[:len(m.buf)-1], nil
		}
		m.buf = append(m.buf, b...)
		if err != bufio.ErrBufferFull {
			return nil, m.readErr(err, name+"'s argument has no ending newline")
		}
	}
}

// strArg reads a string's n bytes: held if at most maxString (and valid,
// as check says), else skipped as kLong. Bytes are held only in generic
// mode.
func (m *machine) strArg(n uint64, name string, isBytes bool, check func([]byte) error) (val, error) {
	if n > uint64(m.lim.maxString) && !(m.lim.generic && n <= math.MaxInt32) {
		return m.skipArg(n, name, isBytes, check)
	}
	hold := !isBytes || m.lim.generic
	if int(n) > m.in.Size() {
		// Read a long string in pieces, so that a length declared
		// beyond the end of the input allocates no more than there is.
		b := m.buf[:0]
		for left := int(n); left > 0; {
			chunk, err := m.read(min(left, m.in.Size()), name)
			if err != nil {
				return val{}, err
			}
			if hold {
				b = append(b, chunk...)
			}
			left -= len(chunk)
		}
		m.buf = b
		return m.keep(b, n, isBytes, hold, check)
	}
	b, err := m.read(int(n), name)
	if err != nil {
		return val{}, err
	}
	return m.keep(b, n, isBytes, hold, check)
}

func (m *machine) keep(b []byte, n uint64, isBytes, hold bool, check func([]byte) error) (val, error) {
	if check != nil {
		if err := check(b); err != nil {
			return val{}, m.fail("%v", err)
		}
	}
	if isBytes {
		if !hold {
			return val{k: kBytes, i: int64(n)}, nil
		}
		c := string(b)
		return val{k: kBytes, i: int64(n), p: unsafe.Pointer(unsafe.StringData(c))}, nil
	}
	return m.newStr(b), nil
}

// skipArg reads past a string of n bytes, longer than tlcheck holds,
// checking it as it goes.
func (m *machine) skipArg(n uint64, name string, isBytes bool, check func([]byte) error) (val, error) {
	var u utf8Stream
	for left := n; left > 0; {
		k := int(min(left, uint64(m.in.Size())))
		b, err := m.in.Peek(k)
		if len(b) == 0 && err != nil {
			return val{}, m.readErr(err, fmt.Sprintf("%s declares %d bytes, %d remain", name, n, n-left))
		}
		if check != nil {
			if err := u.check(b, left == uint64(len(b)), name); err != nil {
				return val{}, m.fail("%v", err)
			}
		}
		m.in.Discard(len(b))
		m.off += int64(len(b))
		left -= uint64(len(b))
	}
	return val{k: kLong, i: int64(min(n, math.MaxInt64))}, nil
}
