package traces

import "io"

// Reader reads a trace in either layout (document or stream), one event at a
// time, without holding the trace in memory.
type Reader struct {
	header Header
	pos    Pos
}

// NewReader reads the header from r and returns a Reader positioned before
// the first event. It tells the layouts apart by the first value.
func NewReader(r io.Reader) (*Reader, error) {
	panic("unimplemented")
}

// Header returns the trace's header.
func (r *Reader) Header() Header { return r.header }

// Pos returns the position of the event last returned by Next.
func (r *Reader) Pos() Pos { return r.pos }

// Next reads the next event into ev. It returns io.EOF after the last event,
// or an *Error naming the line, event and field that could not be read.
func (r *Reader) Next(ev *Event) error {
	panic("unimplemented")
}

// Error is an input error: a place in a trace that could not be read.
type Error struct {
	File  string // set by callers that know it
	Line  int    // 1-based; 0 if unknown
	Event int    // event number; -1 for the header
	Field string // the offending field, "" if none
	Err   error
}

func (e *Error) Error() string { panic("unimplemented") }
func (e *Error) Unwrap() error { return e.Err }
