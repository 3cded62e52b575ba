package mtrace

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"github.com/tlcheck/tlcheck/traces"
)

// The general line parser: it defines what every line means, reading
// fields as glibc's script splits them, and parses in place from the
// read buffer without allocating.

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
		return false, r.errorf("op", fmt.Errorf("unknown operation %s (want one of + - < > ! =)", excerpt(tok)))
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
		return false, r.errorf("op", fmt.Errorf("unknown operation %s (want one of + - < > ! =)", excerpt(tok)))
	}

	tok, rest = field(rest)
	addr, ok := parseAddr(tok)
	if !ok {
		return false, r.errorf("addr", fmt.Errorf("bad address %s (want 0x and hex digits, or (nil))", excerpt(tok)))
	}
	var size uint64
	if op == traces.OpMalloc {
		tok, rest = field(rest)
		if size, ok = parseHex(tok); !ok {
			return false, r.errorf("size", fmt.Errorf("bad size %s (want hex digits)", excerpt(tok)))
		}
		if addr == 0 {
			return false, nil // a failed allocation: nothing was made
		}
		if end, carry := bits.Add64(addr, size, 0); carry != 0 && end != 0 {
			return false, r.errorf("size", fmt.Errorf("address %#x plus size %#x passes 2^64", addr, size))
		}
	}
	if tok, _ = field(rest); len(tok) != 0 {
		return false, r.errorf("", fmt.Errorf("unexpected %s after the operation", excerpt(tok)))
	}
	*ev = traces.Event{Op: op, Addr: traces.Addr(addr), Size: size, HasSize: op == traces.OpMalloc, Site: r.sites.intern(site)}
	return true, nil
}

// field returns the first whitespace-separated field of b and what follows
// it, splitting as glibc's script does (split ' ': runs of blanks).
func field(b []byte) (tok, rest []byte) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	b = b[i:]
	j := blank(b)
	return b[:j], b[j:]
}

// blank returns the index of the first blank in b, or len(b).
func blank(b []byte) int {
	for i, c := range b {
		if isSpace(c) {
			return i
		}
	}
	return len(b)
}

func isSpace(c byte) bool { return spaces[c] }

// spaces marks the bytes Perl's split ' ' treats as blanks.
var spaces = [256]bool{' ': true, '\t': true, '\r': true, '\n': true, '\v': true, '\f': true}

// parseAddr reads an address as glibc's %p writes it: "0x" and hex digits,
// or "(nil)" for NULL.
func parseAddr(b []byte) (uint64, bool) {
	if string(b) == "(nil)" {
		return 0, true
	}
	if len(b) < 3 || b[0] != '0' || (b[1] != 'x' && b[1] != 'X') {
		return 0, false
	}
	return hexDigits(b[2:])
}

// parseHex reads a size as glibc's %#lx writes it: "0x" and hex digits, or
// a bare "0" (the # flag adds no prefix to zero).
func parseHex(b []byte) (uint64, bool) {
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		b = b[2:]
	}
	return hexDigits(b)
}

// maxExcerpt bounds an echo of the log in an error message, quotes and
// escapes included: a field of a broken log can be megabytes long, and
// the message must stay one readable line.
const maxExcerpt = 64

// excerpt quotes b for an error message, cut to maxExcerpt bytes on a
// character boundary; a cut one ends in "..." and its full length:
// "0x41414141..." (52428800 bytes).
func excerpt(b []byte) string {
	// Quote a growing prefix: escapes make the quoted length hard to
	// foresee, and a prefix of maxExcerpt bytes is cheap to quote again.
	n, q := 0, `""`
	for n < len(b) {
		_, size := utf8.DecodeRune(b[n:])
		next := strconv.Quote(string(b[:n+size]))
		if len(next) > maxExcerpt {
			break
		}
		q, n = next, n+size
	}
	if n == len(b) {
		return q
	}
	return q + "... (" + strconv.Itoa(len(b)) + " bytes)"
}
