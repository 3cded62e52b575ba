package index

import "math/bits"

// bucket holds up to eight entries of one cell, packed from the front; it
// is empty when its first entry is.
type bucket [bucketLen]entry

const bucketLen = 8

// The scans below are written out for eight entries.
var _ = [1]int{}[bucketLen-8]

// The scans of a bucket compute their answer without a branch per entry:
// where in a bucket an entry lies, and how many a bucket holds, is
// anyone's guess, and a loop that stopped there would be mispredicted on
// most calls. Each reads the whole bucket instead, written out, since a
// loop of eight costs half again as much as the work it does; on a large
// heap these scans are most of a malloc or a free.

// eq returns 1 if x == y, else 0: the compiler makes it a SETEQ, no branch.
func eq(x, y uint64) uint64 {
	if x == y {
		return 1
	}
	return 0
}

// less returns 1 if x < y, else 0.
func less(x, y uint64) uint64 {
	_, borrow := bits.Sub64(x, y, 0)
	return borrow
}

// used returns how many entries b holds.
func (b *bucket) used() int {
	empty := eq(b[0].meta, 0) + eq(b[1].meta, 0) + eq(b[2].meta, 0) + eq(b[3].meta, 0) +
		eq(b[4].meta, 0) + eq(b[5].meta, 0) + eq(b[6].meta, 0) + eq(b[7].meta, 0)
	return bucketLen - int(empty)
}

// startingAt returns an entry of b that starts at a (there is at most one
// while things do not nest), or nil.
func (b *bucket) startingAt(a uint64) *entry {
	m := eq(b[0].lo, a) | eq(b[1].lo, a)<<1 | eq(b[2].lo, a)<<2 | eq(b[3].lo, a)<<3 |
		eq(b[4].lo, a)<<4 | eq(b[5].lo, a)<<5 | eq(b[6].lo, a)<<6 | eq(b[7].lo, a)<<7
	if m == 0 {
		return nil
	}
	if e := &b[bits.TrailingZeros64(m)%bucketLen]; e.meta != 0 {
		return e
	}
	for j := range b { // the first match was an empty entry: a is 0
		if e := &b[j]; e.lo == a && e.meta != 0 {
			return e
		}
	}
	return nil
}

// holding returns an entry of b whose range holds a (there is at most one
// while things do not nest), or nil. One unsigned compare tests
// e.lo <= a < e.lo+len; an empty entry's length is 0.
func (b *bucket) holding(a uint64) *entry {
	m := less(a-b[0].lo, b[0].len()) | less(a-b[1].lo, b[1].len())<<1 | less(a-b[2].lo, b[2].len())<<2 |
		less(a-b[3].lo, b[3].len())<<3 | less(a-b[4].lo, b[4].len())<<4 | less(a-b[5].lo, b[5].len())<<5 |
		less(a-b[6].lo, b[6].len())<<6 | less(a-b[7].lo, b[7].len())<<7
	if m == 0 {
		return nil
	}
	return &b[bits.TrailingZeros64(m)%bucketLen]
}

// startsIn reports whether an entry of b starts in [lo, hi). One unsigned
// compare tests lo <= e.lo < hi.
func (b *bucket) startsIn(lo, hi uint64) bool {
	n := hi - lo
	m := less(b[0].lo-lo, n) | less(b[1].lo-lo, n)<<1 | less(b[2].lo-lo, n)<<2 | less(b[3].lo-lo, n)<<3 |
		less(b[4].lo-lo, n)<<4 | less(b[5].lo-lo, n)<<5 | less(b[6].lo-lo, n)<<6 | less(b[7].lo-lo, n)<<7
	for ; m != 0; m &= m - 1 { // empty entries start at 0: lo must not be
		if b[bits.TrailingZeros64(m)%bucketLen].meta != 0 {
			return true
		}
	}
	return false
}

// withRef returns b's entry for ref r, or nil. A cell holds one entry per
// thing, so there is at most one.
func (b *bucket) withRef(r ref) *entry {
	m := isRef(&b[0], r) | isRef(&b[1], r)<<1 | isRef(&b[2], r)<<2 | isRef(&b[3], r)<<3 |
		isRef(&b[4], r)<<4 | isRef(&b[5], r)<<5 | isRef(&b[6], r)<<6 | isRef(&b[7], r)<<7
	if m == 0 {
		return nil
	}
	return &b[bits.TrailingZeros64(m)%bucketLen]
}

// isRef returns 1 if e is an entry for ref r, else 0.
func isRef(e *entry, r ref) uint64 { return eq(uint64(e.ref()), uint64(r)) }
