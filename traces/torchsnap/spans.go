package torchsnap

import "slices"

// The mapped ranges of expandable segments, as the prelude rebuilds them:
// PyTorch reports each contiguous mapped range as a segment, and its trace
// maps and unmaps pages anywhere in them, so what was mapped is a set of
// byte ranges, not of segments.

// span is the mapped bytes [lo, hi), with the site of their segment or
// of the entry that mapped them.
type span struct {
	lo, hi uint64
	site   int32
}

// addSpan adds the bytes of s that ss (disjoint, by address) lacks, each
// part with s's site, and returns ss, still disjoint and by address.
func addSpan(ss []span, s span) []span {
	var add []span
	at := s.lo
	for _, o := range ss {
		if o.hi <= at || o.lo >= s.hi {
			continue
		}
		if o.lo > at {
			add = append(add, span{at, o.lo, s.site})
		}
		at = max(at, o.hi)
	}
	if at < s.hi {
		add = append(add, span{at, s.hi, s.site})
	}
	ss = append(ss, add...)
	slices.SortFunc(ss, func(a, b span) int { return cmpUint(a.lo, b.lo) })
	return ss
}

// cutSpan removes the bytes [lo, hi) from ss (disjoint, by address), and
// returns what is left, still disjoint and by address.
func cutSpan(ss []span, lo, hi uint64) []span {
	out := ss[:0:0]
	for _, o := range ss {
		if o.hi <= lo || o.lo >= hi {
			out = append(out, o)
			continue
		}
		if o.lo < lo {
			out = append(out, span{o.lo, lo, o.site})
		}
		if o.hi > hi {
			out = append(out, span{hi, o.hi, o.site})
		}
	}
	return out
}
