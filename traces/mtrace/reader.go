package mtrace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/traces"
)

// SourceName is the header's Source for every mtrace log.
const SourceName = "glibc mtrace"

// bufSize is the read buffer: large enough that every line glibc writes
// fits, so lines are parsed in place without a copy.
const bufSize = 64 << 10

// Reader reads a glibc mtrace log as trace events. It implements
// traces.Source.
type Reader struct {
	br     *bufio.Reader
	line   int        // lines read so far
	events int        // events yielded so far
	pos    traces.Pos // position of the event last yielded
	done   bool       // the end event has been yielded
	long   []byte     // a line longer than the buffer, assembled
	sites  siteCache
}

// NewReader returns a Reader of the log in r. It reads nothing yet: an
// mtrace log has no header to check.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, bufSize), sites: newSiteCache(maxSites)}
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
	if r.done {
		return io.EOF
	}
	for {
		line, err := r.readLine()
		if err == io.EOF {
			r.done = true
			*ev = traces.Event{Op: traces.OpEnd}
			r.yield(0)
			return nil
		}
		if err != nil {
			return &traces.Error{Line: r.line + 1, Event: r.events, Err: fmt.Errorf("reading the log: %w", err)}
		}
		if r.parseFast(line, ev) {
			r.yield(r.line)
			return nil
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
}

// yield numbers the event just filled in.
func (r *Reader) yield(line int) {
	r.pos = traces.Pos{Event: r.events, Line: line}
	r.events++
}

// readLine returns the next line without its line ending, or io.EOF after
// the last. The slice is valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// Only a line no glibc writes gets here; assemble it in r.long.
		r.long = append(r.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = r.br.ReadSlice('\n')
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(line) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	r.line++
	// The final line may lack its newline; take it all the same.
	line = trimEOL(line)
	return line, nil
}

// parseFast reads a line exactly as glibc writes an allocation or a free
// ("@ caller + 0xADDR 0xSIZE", single spaces, nothing else) and reports
// whether it did. Any other line, including any it could misread, is left
// to parse, which defines the meaning of every line; parseFast only gets
// the common ones there sooner. TestParseFastAgrees holds the two equal.
//
// It reads the line backwards: the numbers and the operation in one pass
// over the last twenty-odd bytes, then the caller, most of the line, with
// a single lookup in the caller cache.
func (r *Reader) parseFast(line []byte, ev *traces.Event) bool {
	last, i, prefixed, ok := hexBack(line, len(line))
	if !ok || i < 2 || line[i-1] != ' ' {
		return false
	}
	i--
	if op := line[i-1]; (op == '-' || op == '<') && (i == 1 || line[i-2] == ' ') {
		// "- 0xADDR"
		if !prefixed || last == 0 {
			return false
		}
		*ev = traces.Event{Op: traces.OpFree, Addr: traces.Addr(last)}
		i -= 2
	} else {
		// "+ 0xADDR SIZE"
		addr, j, prefixed, ok := hexBack(line, i)
		if !ok || !prefixed || addr == 0 || j < 2 || line[j-1] != ' ' || line[j-2] != '+' && line[j-2] != '>' || j >= 3 && line[j-3] != ' ' {
			return false
		}
		*ev = traces.Event{Op: traces.OpMalloc, Addr: traces.Addr(addr), Size: last, HasSize: true}
		i = j - 3
	}
	if i <= 0 {
		return i == -1 // no caller: the operation began the line
	}
	if i < 3 || line[0] != '@' || line[1] != ' ' {
		return false
	}
	site := line[2:i]
	// Cached callers hold no blank: parse splits them out, and this path
	// checks them (below) before caching.
	if ev.Site, ok = r.sites.lookup(site); !ok {
		if bytes.IndexByte(site, ' ') >= 0 || hasControl(site) {
			return false // a blank would split the caller
		}
		ev.Site = r.sites.intern(site)
	}
	return true
}

// parse reads one line into ev. It reports false for a line that yields no
// event (blank, "=", "!", a failed allocation).
func (r *Reader) parse(line []byte, ev *traces.Event) (bool, error) {
	tok, rest := field(line)
	if len(tok) == 0 {
		return false, nil // blank line
	}
	var site []byte
	if len(tok) == 1 && tok[0] == '@' {
		site, rest = field(rest)
		if len(site) == 0 {
			return false, r.errorf("caller", errors.New(`"@" without a caller`))
		}
		tok, rest = field(rest)
		if len(tok) == 0 {
			return false, r.errorf("op", errors.New("caller without an operation"))
		}
	}
	if len(tok) != 1 {
		return false, r.errorf("op", fmt.Errorf("unknown operation %q (want one of + - < > ! =)", tok))
	}
	var op traces.Op
	switch tok[0] {
	case '+', '>':
		op = traces.OpMalloc
	case '-', '<':
		op = traces.OpFree
	case '=', '!':
		// "= Start", "= End" and a failed realloc change nothing, as in
		// glibc's script; the rest of the line is not read.
		return false, nil
	default:
		return false, r.errorf("op", fmt.Errorf("unknown operation %q (want one of + - < > ! =)", tok))
	}

	tok, rest = field(rest)
	addr, ok := parseAddr(tok)
	if !ok {
		return false, r.errorf("addr", fmt.Errorf("bad address %q (want 0x and hex digits, or (nil))", tok))
	}
	var size uint64
	if op == traces.OpMalloc {
		tok, rest = field(rest)
		if size, ok = parseHex(tok); !ok {
			return false, r.errorf("size", fmt.Errorf("bad size %q (want hex digits)", tok))
		}
		if addr == 0 {
			return false, nil // a failed allocation: nothing was made
		}
	}
	if tok, _ = field(rest); len(tok) != 0 {
		return false, r.errorf("", fmt.Errorf("unexpected %q after the operation", tok))
	}
	*ev = traces.Event{Op: op, Addr: traces.Addr(addr), Size: size, HasSize: op == traces.OpMalloc, Site: r.sites.intern(site)}
	return true, nil
}

// errorf returns an input error at the current line, naming field.
func (r *Reader) errorf(field string, err error) error {
	return &traces.Error{Line: r.line, Event: r.events, Field: field, Err: err}
}
