package model

// where says on which line and at which site an event was, in a form
// that repeats from event to event (see lineCode), so that the things made
// and killed at a site share one record instead of each carrying a line
// and a string: a log of a million blocks has a few thousand distinct ones.
type where struct {
	line lineCode
	site string
}

// lineCode is an event's line as it repeats from event to event: in a
// stream, line minus event number is nearly constant (the header, blank
// and skipped lines before the event), so a line not before its event is
// coded as that offset (0 or more); a line before its event (no line at
// all, 0, as for events stepped without a file, or a document's single
// line) is coded as -1 - line.
type lineCode int

func codeLine(h hist) lineCode {
	if h.line >= h.event {
		return lineCode(h.line - h.event)
	}
	return lineCode(-1 - h.line)
}

// line decodes c, the line code of event.
func (c lineCode) line(event int) int {
	if c >= 0 {
		return event + int(c)
	}
	return -1 - int(c)
}

// whereTable interns where records. It is bounded: when it holds
// maxWheres records it starts afresh, so a trace with more distinct ones
// (a site per event, say) costs a record per thing instead of growing the
// table; things keep the records they have, which the garbage collector
// frees with the last of them.
type whereTable struct {
	front [whereFront]*where // direct-mapped on a cheap hash: most lookups end here
	all   map[where]*where
}

const (
	whereFront = 1 << 12 // a power of two
	maxWheres  = 1 << 16
)

// of returns the record of an event at h.
func (wt *whereTable) of(h hist) *where {
	w := where{codeLine(h), h.site}
	i := w.hash() & (whereFront - 1)
	if p := wt.front[i]; p != nil && *p == w { // sites from one reader share their bytes: a pointer compare
		return p
	}
	// The front is two-way: a record pushed out of its slot by another of
	// the same hash moves to the slot's twin, so two hot sites that collide
	// do not keep sending each other to the map.
	if p := wt.front[i^1]; p != nil && *p == w {
		wt.front[i^1], wt.front[i] = wt.front[i], p
		return p
	}
	p := wt.all[w]
	if p == nil {
		if wt.all == nil || len(wt.all) >= maxWheres {
			wt.all = make(map[where]*where)
		}
		p = new(where)
		*p = w
		wt.all[w] = p
	}
	wt.front[i^1], wt.front[i] = wt.front[i], p
	return p
}

// hash mixes what tells where records apart cheaply: the line code and the
// site's length and last eight bytes (where a caller's address is).
func (w *where) hash() uint64 {
	h := (uint64(w.line)*0x9E3779B97F4A7C15 ^ tail(w.site)) * 0xBF58476D1CE4E5B9
	return h >> 32 // a product's high bits depend on all of its operand's bits

}

// tail returns s's length and last bytes, up to eight, as one number.
func tail(s string) uint64 {
	n := len(s)
	if n < 8 {
		v := uint64(n)
		for i := range n {
			v = v<<8 | uint64(s[i])
		}
		return v
	}
	b := s[n-8:] // the compiler reads these eight bytes at once
	return uint64(n) ^ (uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56)
}
