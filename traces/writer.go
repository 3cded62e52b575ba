package traces

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Writer writes a trace in either layout, one event at a time, through a
// buffer: call Flush or Close at the end. Both layouts put the header on
// line 1 and event i on line i+2, so a trace's positions are the same
// whichever layout it is written in.
//
// Errors are sticky: after a failed write, every later call returns the
// same error. A Writer is not safe for concurrent use.
type Writer struct {
	w      *bufio.Writer
	buf    []byte
	n      int  // events written
	doc    bool // document layout
	closed bool
	err    error
}

const writeBuf = 64 << 10

// NewWriter returns a Writer of the stream layout (JSON Lines): the header
// line, then one event a line. It writes the header's Effects and Source;
// the format name and version are always this package's.
func NewWriter(w io.Writer, h Header) *Writer {
	tw := &Writer{w: bufio.NewWriterSize(w, writeBuf)}
	tw.buf = append(appendHeader(tw.buf[:0], h), '}', '\n')
	tw.emit()
	return tw
}

// NewDocumentWriter returns a Writer of the document layout: one JSON
// object whose header fields come first and whose "events" array holds one
// event a line. Close writes the end of the document.
func NewDocumentWriter(w io.Writer, h Header) *Writer {
	tw := &Writer{w: bufio.NewWriterSize(w, writeBuf), doc: true}
	tw.buf = append(appendHeader(tw.buf[:0], h), `,"events":[`...)
	tw.emit()
	return tw
}

// appendHeader appends the header object without its closing brace.
func appendHeader(dst []byte, h Header) []byte {
	dst = append(dst, `{"format":"`+FormatName+`","version":`+strconv.Itoa(Version)+`,"effects":`...)
	dst = strconv.AppendBool(dst, h.Effects)
	if h.Source != "" {
		dst = append(dst, `,"source":`...)
		dst = appendString(dst, h.Source)
	}
	return dst
}

// Write writes one event. It returns an error, and writes nothing, if the
// event cannot be written as a valid trace event: an invalid op, or Slots
// or Slot outside 0 to 2^31-1.
func (w *Writer) Write(ev *Event) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("traces: write after Close")
	}
	if err := checkEvent(ev); err != nil {
		return fmt.Errorf("traces: writing event %d: %w", w.n, err)
	}
	w.buf = w.buf[:0]
	if w.doc {
		if w.n > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = append(w.buf, '\n')
	}
	w.buf = AppendEvent(w.buf, ev)
	if !w.doc {
		w.buf = append(w.buf, '\n')
	}
	w.n++
	w.emit()
	return w.err
}

// emit hands buf to the buffered writer, keeping the first error.
func (w *Writer) emit() {
	if w.err == nil {
		if _, err := w.w.Write(w.buf); err != nil {
			w.err = fmt.Errorf("traces: writing: %w", err)
		}
	}
}

// Flush writes any buffered data to the underlying io.Writer.
func (w *Writer) Flush() error {
	if w.err == nil {
		if err := w.w.Flush(); err != nil {
			w.err = fmt.Errorf("traces: writing: %w", err)
		}
	}
	return w.err
}

// Close finishes the trace: for a document it writes the closing "]}".
// Then it flushes. It does not close the underlying io.Writer. Close of a
// stream is Flush.
func (w *Writer) Close() error {
	if w.doc && !w.closed && w.err == nil {
		w.buf = append(w.buf[:0], "\n]}\n"...)
		w.emit()
	}
	w.closed = true
	return w.Flush()
}

// checkEvent reports whether ev can be written as a valid trace event: its
// op is one of the format's, and Slots and Slot are between 0 and 2^31-1.
func checkEvent(ev *Event) error {
	if ev.Op == OpInvalid || ev.Op >= opCount {
		return fmt.Errorf("no such op %s", ev.Op)
	}
	if ev.Slots < 0 || ev.Slots > maxSlot {
		return fmt.Errorf("%s: slots %d is not between 0 and %d", ev.Op, ev.Slots, maxSlot)
	}
	if ev.Slot < 0 || ev.Slot > maxSlot {
		return fmt.Errorf("%s: slot %d is not between 0 and %d", ev.Op, ev.Slot, maxSlot)
	}
	return nil
}

// AppendEvent appends ev to dst as one compact JSON object, the canonical
// form: "op" first, then the op's required fields in the order FORMAT.md
// lists them, then its optional fields that are set (size on read and write
// when HasSize, var and kind when not empty, space when device), then site,
// t and thread when set. Addresses are hex strings; thread is always a
// string. Fields the op does not have are not written. ev should be valid
// (see Writer.Write): an invalid op is written under a name no reader
// accepts.
func AppendEvent(dst []byte, ev *Event) []byte {
	dst = append(dst, `{"op":"`...)
	dst = append(dst, ev.Op.String()...)
	dst = append(dst, '"')
	if ev.Op >= opCount {
		return append(dst, '}')
	}
	spec := &opSpecs[ev.Op]
	for _, f := range spec.required {
		dst = appendField(dst, ev, f)
	}
	for _, f := range spec.optional {
		if fieldRows[f].isSet(ev) {
			dst = appendField(dst, ev, f)
		}
	}
	for _, f := range [...]field{fieldSite, fieldT, fieldThread} {
		if fieldRows[f].isSet(ev) {
			dst = appendField(dst, ev, f)
		}
	}
	return append(dst, '}')
}

// appendField appends `,"name":value`.
func appendField(dst []byte, ev *Event, f field) []byte {
	row := &fieldRows[f]
	dst = append(dst, `,"`...)
	dst = append(dst, row.name...)
	dst = append(dst, `":`...)
	return row.appendValue(dst, ev)
}

func appendAddr(dst []byte, a Addr) []byte {
	dst = append(dst, `"0x`...)
	dst = strconv.AppendUint(dst, uint64(a), 16)
	return append(dst, '"')
}

// appendString appends s as a JSON string. Bytes that are not UTF-8 become
// U+FFFD, as in encoding/json, so the output is always valid JSON.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, `\n`...)
			case '\r':
				dst = append(dst, `\r`...)
			case '\t':
				dst = append(dst, `\t`...)
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
