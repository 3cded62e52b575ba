package mtrace

import (
	"bytes"
	"encoding/binary"

	"github.com/tlcheck/tlcheck/traces"
)

// parseFast reads a line exactly as glibc writes an allocation or a free,
//
//	@ caller + 0xADDR 0xSIZE
//	@ caller - 0xADDR
//
// (or ">", "<"; single blanks; 1 to 15 hex digits a number; nothing else),
// and reports whether it did. Any other line, including any it could
// misread, is left to parse, which defines the meaning of every line;
// parseFast only gets the common ones there sooner. TestParseFastAgrees
// and the fuzz target beside it in fast_test.go hold the two equal.
//
// It reads the line backwards from its end, which the line splitter has
// just found: the numbers and the operation in one pass over the last
// twenty-odd bytes, then the caller, most of the line, with a single
// lookup in the caller cache.
func (r *Reader) parseFast(line []byte, ev *traces.Event) bool {
	if len(line) < 2 || line[0] != '@' || line[1] != ' ' {
		return false
	}
	// The last number: a malloc's size or a free's address.
	last, i, ok := numberBefore(line, len(line))
	if !ok {
		return false
	}
	var blank int // the blank that ends the caller
	switch op := line[i-4]; {
	case (op == '-' || op == '<') && line[i-5] == ' ':
		*ev = traces.Event{Op: traces.OpFree, Addr: traces.Addr(last)}
		blank = i - 5
	case hexVal[op] <= 15:
		addr, j, ok := numberBefore(line, i-3)
		if !ok || addr == 0 || line[j-4] != '+' && line[j-4] != '>' || line[j-5] != ' ' {
			return false // a failed allocation (addr 0) yields nothing: parse says so
		}
		*ev = traces.Event{Op: traces.OpMalloc, Addr: traces.Addr(addr), Size: last, HasSize: true}
		blank = j - 5
	default:
		return false
	}
	site := line[2:blank]
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

// numberBefore reads the number that ends at b[end]: " 0x" and 1 to 15 hex
// digits, with at least five bytes before the blank (room for "@ ", a
// caller, a blank and the operation). It returns the value and where its
// digits start.
//
// A byte at a time, through a table: on a real log this is as fast as
// reading eight digits at once with word arithmetic, and plainer.
func numberBefore(b []byte, end int) (v uint64, start int, ok bool) {
	if end > len(b) {
		return 0, 0, false
	}
	i, shift := end, uint(0)
	for ; i > 0; i-- {
		d := hexVal[b[i-1]]
		if d > 15 {
			break
		}
		v |= uint64(d) << (shift & 63) // past 15 digits v is spoilt, and refused below
		shift += 4
	}
	if i == end || shift > 60 || i < 8 || b[i-1] != 'x' || b[i-2] != '0' || b[i-3] != ' ' {
		return 0, 0, false
	}
	return v, i, true
}

// hasControl reports whether b holds a byte below ' ' (a tab, a carriage
// return...), eight bytes at a time: callers are most of a log's bytes.
func hasControl(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if (x-' '*ones)&^x&highs != 0 {
			return true // some byte of the word is below ' '
		}
	}
	for ; i < len(b); i++ {
		if b[i] < ' ' {
			return true
		}
	}
	return false
}

const ones, highs = 0x0101010101010101, 0x8080808080808080
