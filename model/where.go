package model

import "unsafe"

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
//
// The front starts small and grows with the records, up to whereFront
// slots: a checker reused for thousands of short traces a second (Reset)
// empties it for each, and clearing the full front, slot by slot under
// the garbage collector's write barrier, cost more than a short trace's
// lookups save.
type whereTable struct {
	front []*where // direct-mapped on a cheap hash, a power of two long: most lookups end here
	all   map[where]*where
}

// newWhereTable returns an empty table.
func newWhereTable() whereTable { return whereTable{front: make([]*where, minWhereFront)} }

// reset empties the table as newWhereTable makes it, keeping the memory
// of a small front and map.
func (wt *whereTable) reset() {
	if len(wt.front) == minWhereFront {
		clear(wt.front)
	} else {
		wt.front = make([]*where, minWhereFront)
	}
	if len(wt.all) > minWhereFront {
		wt.all = nil // clear costs what the map grew to
	}
	clear(wt.all)
}

const (
	minWhereFront = 1 << 6  // the front's slots when new; a power of two
	whereFront    = 1 << 12 // the most the front grows to; a power of two
	maxWheres     = 1 << 16
)

// of returns the record of an event at h.
//
// The front is hashed on where the site's bytes lie, not on what they say:
// the trace readers intern sites, so the events of one site share one
// string, and a lookup neither reads the site nor compares two strings. A
// site whose bytes lie elsewhere (not interned, or interned afresh) is
// still found, by value, in the map.
func (wt *whereTable) of(h hist) *where {
	line := codeLine(h)
	i := whereHash(line, h.site) & uint64(len(wt.front)-1)
	if p := wt.front[i]; p != nil && p.is(line, h.site) {
		return p
	}
	// The front is two-way: a record pushed out of its slot by another of
	// the same hash moves to the slot's twin, so two hot sites that collide
	// do not keep sending each other to the map.
	if p := wt.front[i^1]; p != nil && p.is(line, h.site) {
		wt.front[i^1], wt.front[i] = wt.front[i], p
		return p
	}
	w := where{line, h.site}
	p := wt.all[w]
	if p == nil {
		if wt.all == nil || len(wt.all) >= maxWheres {
			wt.all = make(map[where]*where)
		}
		p = new(where)
		*p = w
		wt.all[w] = p
		if len(wt.all) > len(wt.front)/2 && len(wt.front) < whereFront {
			// More records than the front keeps well: a bigger one,
			// filled again from the map as lookups miss it.
			wt.front = make([]*where, 4*len(wt.front))
			i = whereHash(line, h.site) & uint64(len(wt.front)-1)
		}
	}
	wt.front[i^1], wt.front[i] = wt.front[i], p
	return p
}

// is reports whether w is the record of line code line at site. Interned
// sites are told apart by where their bytes lie; others are compared.
func (w *where) is(line lineCode, site string) bool {
	return w.line == line && len(w.site) == len(site) &&
		(unsafe.StringData(w.site) == unsafe.StringData(site) || w.site == site)
}

// whereHash mixes the line code and where the site's bytes lie.
func whereHash(line lineCode, site string) uint64 {
	h := (uint64(line)*0x9E3779B97F4A7C15 ^ uint64(uintptr(unsafe.Pointer(unsafe.StringData(site))))) * 0xBF58476D1CE4E5B9
	return h >> 32 // a product's high bits depend on all of its operand's bits
}
