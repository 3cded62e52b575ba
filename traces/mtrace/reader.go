package mtrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/traces"
)

// SourceName is the header's Source for every mtrace log.
const SourceName = "glibc mtrace"

var (
	// errEmpty is an input error, not a clean log of no events: glibc
	// writes "= Start" as tracing begins, so a log with no line (or only
	// blank ones)
	// means the program never traced (the usual cause: MALLOC_TRACE or
	// the preload did not reach it), and passing it would hide that.
	errEmpty = errors.New(`empty mtrace log: glibc writes "= Start" when tracing begins, so the program was not traced (check that MALLOC_TRACE names this file and libc_malloc_debug.so.0 is preloaded)`)

	errBOM = errors.New("the log starts with a UTF-8 byte-order mark (bytes EF BB BF), which glibc never writes: save the file without one")
)

// Reader reads a glibc mtrace log as trace events. It implements
// traces.Source.
type Reader struct {
	br     lineBuf
	line   int        // lines read so far
	events int        // events yielded so far
	pos    traces.Pos // position of the event last yielded
	done   bool       // the end event has been yielded
	filled bool       // a line that is not blank has been read
	sites  siteCache
}

// NewReader returns a Reader of the log in r. It reads nothing yet: an
// mtrace log has no header to check.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: lineBuf{rd: r}, sites: newSiteCache(maxSites)}
}

// Header returns the header every mtrace log gets: no effects, Source
// "glibc mtrace".
func (r *Reader) Header() traces.Header {
	return traces.Header{Format: traces.FormatName, Version: traces.Version, Source: SourceName}
}

// Pos returns the position of the event last returned by Next.
func (r *Reader) Pos() traces.Pos { return r.pos }

// Next fills ev with the next event. After the last line it yields one end
// event, then io.EOF. A line it cannot read is an *traces.Error naming it;
// so is a failure of the underlying reader.
func (r *Reader) Next(ev *traces.Event) error {
	for !r.done {
		line, err := r.br.next()
		if err == errLongLine {
			return r.longLine(line)
		}
		if err != nil {
			return r.end(err, ev)
		}
		r.line++
		if r.parseFast(line, ev) {
			r.filled = true
			r.yield(r.line)
			return nil
		}
		// The final line may lack its newline; any may end in "\r\n".
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if r.line == 1 && bytes.HasPrefix(line, []byte(bom)) {
			return r.errorf("", errBOM)
		}
		if !r.filled {
			tok, _ := field(line)
			r.filled = len(tok) > 0
		}
		ok, err := r.parse(line, ev)
		if err != nil {
			return err
		}
		if ok {
			r.yield(r.line)
			return nil
		}
	}
	return io.EOF
}

// end yields the end event after the last line, or the error that ended
// reading before it.
func (r *Reader) end(err error, ev *traces.Event) error {
	if err != io.EOF {
		return &traces.Error{Line: r.line + 1, Event: r.events, Err: fmt.Errorf("reading the log: %w", err)}
	}
	if !r.filled {
		return &traces.Error{Event: r.events, Err: errEmpty} // no line to name
	}
	r.done = true
	*ev = traces.Event{Op: traces.OpEnd}
	r.yield(0)
	return nil
}

// longLine is the error for a line longer than MaxLine, of which prefix
// is the start: it names the field that runs past MaxLine (the caller, the
// operation, the address, the size, or none for what follows them).
func (r *Reader) longLine(prefix []byte) error {
	r.line++
	toks := bytes.Fields(prefix)
	names := []string{"op", "addr", "size", ""}
	if len(toks) > 0 && string(toks[0]) == "@" {
		names = []string{"", "caller", "op", "addr", "size", ""}
	}
	f, last := "", len(toks)-1
	if last >= 0 && last < len(names) && !(last >= len(names)-2 && isFree(toks, names)) {
		f = names[last]
	}
	start := toks[max(last, 0)]
	if len(start) > 40 {
		start = start[:40]
	}
	return r.errorf(f, fmt.Errorf("%w; it runs on from %q...", errLongLine, start))
}

// isFree reports whether a line's operation is a free, which has no size.
func isFree(toks [][]byte, names []string) bool {
	for i, n := range names {
		if n == "op" && i < len(toks) {
			return len(toks[i]) == 1 && (toks[i][0] == '-' || toks[i][0] == '<')
		}
	}
	return false
}

// yield numbers the event just filled in.
func (r *Reader) yield(line int) {
	r.pos = traces.Pos{Event: r.events, Line: line}
	r.events++
}

// errorf returns an input error at the current line, naming field.
func (r *Reader) errorf(field string, err error) error {
	return &traces.Error{Line: r.line, Event: r.events, Field: field, Err: err}
}
