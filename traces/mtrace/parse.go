package mtrace

import (
	"encoding/binary"
	"math/bits"
)

// The line scanner: fields, hex numbers and caller strings, parsed in place
// from the read buffer without allocating.

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

func isSpace(c byte) bool { return spaces[c] }

// spaces marks the bytes Perl's split ' ' treats as blanks.
var spaces = [256]bool{' ': true, '\t': true, '\r': true, '\n': true, '\v': true, '\f': true}

// trimEOL drops a trailing "\n" or "\r\n".
func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

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

// hexDigits reads a non-empty run of hex digits that fits in 64 bits.
func hexDigits(b []byte) (uint64, bool) {
	for len(b) > 16 && b[0] == '0' {
		b = b[1:] // leading zeros beyond 16 digits do not overflow
	}
	v, start, prefixed, ok := hexBack(b, len(b))
	return v, ok && !prefixed && start == 0
}

// hexBack reads the hex number that ends at b[end] (exclusive), backwards,
// as glibc writes addresses ("0x" and digits) and sizes (the same, or a
// bare "0"). It returns the value, where the number starts, whether it had
// the "0x" prefix, and false if there is no number of 1 to 16 digits there.
//
// Addresses are most of the digits in a log, a dozen each, so it takes
// eight bytes at a time: which of them are digits, and their value, in a
// few word operations.
func hexBack(b []byte, end int) (v uint64, start int, prefixed, ok bool) {
	i, shift := end, uint(0)
	for i >= 8 {
		x := binary.LittleEndian.Uint64(b[i-8:])
		// The last byte is the word's high byte: count the digits there.
		k := uint(bits.LeadingZeros64(^hexMask(x)&highs)) / 8
		if k == 0 {
			break
		}
		if shift+4*k > 64 {
			return 0, 0, false, false
		}
		// Make the other bytes '0' (leading zeros) and convert.
		low := uint64(1)<<(8*(8-k)) - 1 // k == 8: 1<<0 - 1 == 0
		v |= hexValue(x&^low|'0'*ones&low) << shift
		shift += 4 * k
		i -= int(k)
		if k < 8 {
			break
		}
	}
	for ; i > 0; i-- {
		d := hexVal[b[i-1]]
		if d > 15 {
			break
		}
		if shift == 64 {
			return 0, 0, false, false
		}
		v |= uint64(d) << shift
		shift += 4
	}
	if i == end {
		return 0, 0, false, false
	}
	if i >= 2 && (b[i-1] == 'x' || b[i-1] == 'X') && b[i-2] == '0' {
		return v, i - 2, true, true
	}
	return v, i, false, true
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// hexMask returns 0x80 in each byte of x that is a hex digit ('0'-'9',
// 'a'-'f', 'A'-'F') and 0 in the others. For a byte c below 0x80,
// c+(0x80-lo) sets the high bit iff c >= lo, and c+(0x7f-hi) iff c > hi;
// clearing the high bits first keeps carries inside their bytes.
func hexMask(x uint64) uint64 {
	x7 := x &^ highs
	in := func(y uint64, lo, hi byte) uint64 {
		return (y + (0x80-uint64(lo))*ones) &^ (y + (0x7f-uint64(hi))*ones) & highs
	}
	return (in(x7, '0', '9') | in(x7|0x20*ones, 'a', 'f')) &^ x
}

// hexValue converts eight hex digits packed in x, the first in the low
// byte and the most significant.
func hexValue(x uint64) uint64 {
	// A digit's low nibble is its value; a letter's (bit 6 set) is 9 less.
	x = x&(0x0f*ones) + 9*(x>>6&ones)
	x = (x<<4 | x>>8) & 0x00ff00ff00ff00ff
	x = (x<<8 | x>>16) & 0x0000ffff0000ffff
	return (x<<16 | x>>32) & 0x00000000ffffffff
}

// hexVal maps a hex digit to its value and every other byte to 0xff.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
		t[c-'a'+'A'] = byte(c-'a') + 10
	}
	return t
}()

// maxSites bounds the caller cache. A program has a few hundred distinct
// callers of malloc, a large one a few thousand; past the bound the cache
// starts over, so memory stays bounded whatever the log holds.
const maxSites = 1 << 14

// siteCache interns caller strings, so that a log of millions of lines
// makes one string per distinct caller instead of one per line.
//
// A line's caller is looked up first in a small direct-mapped table,
// indexed by a hash of the caller's length and last eight bytes (which
// hold its return address, "...[0x1af17a]"): one load and one compare.
// Misses there go to a map of every caller seen.
type siteCache struct {
	front [frontSize]string
	m     map[string]string
	max   int
}

const frontSize = 1 << 10 // a power of two

func newSiteCache(max int) siteCache {
	return siteCache{m: make(map[string]string), max: max}
}

// slot is the front table's index for b.
func slot(b []byte) int {
	var tail uint64
	if len(b) >= 8 {
		tail = binary.LittleEndian.Uint64(b[len(b)-8:])
	} else {
		for _, c := range b {
			tail = tail<<8 | uint64(c)
		}
	}
	h := (tail ^ uint64(len(b))) * 0x9e3779b97f4a7c15
	return int(h >> (64 - 10))
}

// lookup returns the cached string equal to b, if there is one.
func (c *siteCache) lookup(b []byte) (string, bool) {
	i := slot(b)
	if s := c.front[i]; s == string(b) { // the comparison does not allocate
		return s, true
	}
	s, ok := c.m[string(b)] // nor does the lookup
	if ok {
		c.front[i] = s
	}
	return s, ok
}

// intern returns b as a string, shared with every earlier equal b while
// the cache holds it.
func (c *siteCache) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := c.lookup(b); ok {
		return s
	}
	if len(c.m) >= c.max {
		clear(c.m)
		c.front = [frontSize]string{}
	}
	s := string(b)
	c.m[s] = s
	c.front[slot(b)] = s
	return s
}
