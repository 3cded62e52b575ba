package mtrace

import "encoding/binary"

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
