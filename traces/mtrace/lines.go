package mtrace

import (
	"bytes"
	"errors"
	"io"
)

// bufSize is the line buffer's size: every line glibc writes fits many
// times over, so lines are parsed in place without a copy, and a buffer of
// them stays in the CPU's cache while it is parsed.
const bufSize = 64 << 10

// maxEmptyReads is how many reads in a row may return nothing before the
// underlying reader is taken to be broken, as bufio does.
const maxEmptyReads = 100

// MaxLine is the longest line read: glibc's lines are a few hundred bytes
// at most, so a longer one is an input error, found without holding more
// than MaxLine bytes of it (FORMAT.md, "Limits").
const MaxLine = 1 << 20

var (
	errBadCount = errors.New("the underlying reader returned an impossible count")
	errLongLine = errors.New("a line longer than 1048576 bytes (MaxLine): glibc writes none so long")
)

// lineBuf splits a stream into lines: bufio.Reader.ReadSlice cut down to
// what the reader needs, one IndexByte over the buffered bytes per line
// and nothing else, which matters at tens of millions of lines. A line
// longer than the buffer grows it; it is never cut.
type lineBuf struct {
	rd   io.Reader
	buf  []byte
	r, w int   // buf[r:w] is read from rd and not yet returned
	err  error // rd's error, returned once buf[r:w] is used up
}

// Reset makes b read rd from its start, keeping its buffer.
func (b *lineBuf) Reset(rd io.Reader) {
	*b = lineBuf{rd: rd, buf: b.buf}
}

// next returns the next line without its "\n", which the final line may
// lack, or the reader's error (io.EOF after the last line). A line is
// valid until the next call. A read error drops the unfinished line
// before it, as bufio does. A line longer than MaxLine is errLongLine,
// with its first MaxLine bytes.
func (b *lineBuf) next() ([]byte, error) {
	rest := b.buf[b.r:b.w]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		b.r += i + 1
		return rest[:i], nil
	}
	return b.more()
}

// more is next where the buffer holds no whole line: it reads until one
// is whole or the reader fails.
func (b *lineBuf) more() ([]byte, error) {
	for b.err == nil {
		searched := b.w - b.r // the unfinished line: no newline in it
		if searched > MaxLine {
			return b.buf[b.r : b.r+MaxLine], errLongLine
		}
		b.fill()
		if i := bytes.IndexByte(b.buf[b.r+searched:b.w], '\n'); i >= 0 {
			end := b.r + searched + i
			line := b.buf[b.r:end]
			b.r = end + 1
			return line, nil
		}
	}
	if b.err != io.EOF || b.r == b.w {
		return nil, b.err
	}
	line := b.buf[b.r:b.w]
	b.r = b.w
	return line, nil
}

// fill moves the unfinished line to the front of the buffer, growing the
// buffer if the line fills it, and reads more after it.
func (b *lineBuf) fill() {
	if b.r > 0 {
		b.w = copy(b.buf, b.buf[b.r:b.w])
		b.r = 0
	}
	if b.w == len(b.buf) {
		// The first read, or a line longer than the buffer: no glibc
		// line is. The buffer stays grown, at most twice the longest line.
		grown := make([]byte, max(bufSize, 2*len(b.buf)))
		copy(grown, b.buf[:b.w])
		b.buf = grown
	}
	for range maxEmptyReads {
		n, err := b.rd.Read(b.buf[b.w:])
		if n < 0 || n > len(b.buf)-b.w {
			b.err = errBadCount
			return
		}
		b.w += n
		if err != nil {
			b.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	b.err = io.ErrNoProgress
}
