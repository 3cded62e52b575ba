package torchsnap

import (
	"cmp"
	"slices"
)

// The mapped ranges of expandable segments, as the prelude rebuilds them:
// PyTorch reports each contiguous mapped range as a segment, and its trace
// maps and unmaps pages anywhere in them, so what was mapped is a set of
// byte ranges, not of segments.

// span is the bytes lo to last, both included (so that a range that ends
// at 2^64 has an end), with the site of their segment or of the entry that
// mapped them.
type span struct {
	lo, last uint64
	site     int32
}

func (s span) size() uint64 { return s.last - s.lo + 1 }

// spanOf is the n > 0 bytes at lo.
func spanOf(lo, n uint64, site int32) span { return span{lo, lo + n - 1, site} }

// addSpan adds the bytes of s that ss (disjoint, by address) lacks, each
// part with s's site, and returns ss, still disjoint and by address.
func addSpan(ss []span, s span) []span {
	var add []span
	at, done := s.lo, false // the next byte of s not yet covered; done: none is left
	for _, o := range ss {
		if done || o.last < at || o.lo > s.last {
			continue
		}
		if o.lo > at {
			add = append(add, span{at, o.lo - 1, s.site})
		}
		if o.last >= s.last {
			done = true
		} else {
			at = max(at, o.last+1)
		}
	}
	if !done {
		add = append(add, span{at, s.last, s.site})
	}
	ss = append(ss, add...)
	slices.SortFunc(ss, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	return ss
}

// cutSpan removes the bytes of c from ss (disjoint, by address), and
// returns what is left, still disjoint and by address.
func cutSpan(ss []span, c span) []span {
	out := ss[:0:0]
	for _, o := range ss {
		if o.last < c.lo || o.lo > c.last {
			out = append(out, o)
			continue
		}
		if o.lo < c.lo {
			out = append(out, span{o.lo, c.lo - 1, o.site})
		}
		if o.last > c.last {
			out = append(out, span{c.last + 1, o.last, o.site})
		}
	}
	return out
}
