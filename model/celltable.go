package model

import "math/bits"

// cellTable is a hash table from cell number to cell: open addressing with
// linear probing, Fibonacci hashing and backward-shift deletion. A cell
// keeps its first entries inline, so a lookup of a sparsely used cell
// costs one cache miss where a Go map of cell pointers costs three or four;
// memory latency is what a replay of a large heap spends its time on.
//
// A *cell is valid until the next put or drop.
type cellTable struct {
	slots []cell
	used  int
	shift uint // 64 - log2(len(slots))
}

// inlineEntries is the entries a cell holds without an allocation.
const inlineEntries = 3

type cell struct {
	key  uint64 // cell number + 1; 0: an empty slot
	n    int
	in   [inlineEntries]entry
	more []entry
}

// entry is a thing with its range inline, so a scan does not chase pointers.
type entry struct {
	lo, hi uint64
	t      *thing
}

const minSlots = 1024

func (tb *cellTable) init() {
	tb.slots = make([]cell, minSlots)
	tb.used = 0
	tb.shift = 64 - uint(bits.TrailingZeros(minSlots))
}

func (tb *cellTable) home(k uint64) int {
	return int((k * 0x9E3779B97F4A7C15) >> tb.shift)
}

// get returns cell k, or nil.
func (tb *cellTable) get(k uint64) *cell {
	key, mask := k+1, len(tb.slots)-1
	for i := tb.home(k); ; i = (i + 1) & mask {
		c := &tb.slots[i]
		if c.key == key {
			return c
		}
		if c.key == 0 {
			return nil
		}
	}
}

// put returns cell k, adding it empty if it is not there; fresh says
// whether it was added.
func (tb *cellTable) put(k uint64) (c *cell, fresh bool) {
	if (tb.used+1)*10 > len(tb.slots)*7 {
		tb.resize(len(tb.slots) * 2)
	}
	key, mask := k+1, len(tb.slots)-1
	i := tb.home(k)
	for ; tb.slots[i].key != 0; i = (i + 1) & mask {
		if tb.slots[i].key == key {
			return &tb.slots[i], false
		}
	}
	tb.slots[i].key = key
	tb.used++
	return &tb.slots[i], true
}

// drop removes cell k, which must be empty of entries.
func (tb *cellTable) drop(k uint64) {
	key, mask := k+1, len(tb.slots)-1
	i := tb.home(k)
	for tb.slots[i].key != key {
		if tb.slots[i].key == 0 {
			return
		}
		i = (i + 1) & mask
	}
	// Backward-shift: move later members of the probe run into the hole.
	for j := (i + 1) & mask; tb.slots[j].key != 0; j = (j + 1) & mask {
		h := tb.home(tb.slots[j].key - 1)
		// Slot j may fill hole i if its home is not in (i, j] cyclically.
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			tb.slots[i] = tb.slots[j]
			i = j
		}
	}
	tb.slots[i] = cell{}
	tb.used--
	if len(tb.slots) > minSlots && tb.used*10 < len(tb.slots) {
		tb.resize(len(tb.slots) / 2)
	}
}

func (tb *cellTable) resize(n int) {
	old := tb.slots
	tb.slots = make([]cell, n)
	tb.shift = 64 - uint(bits.TrailingZeros(uint(n)))
	mask := n - 1
	for i := range old {
		if old[i].key == 0 {
			continue
		}
		j := tb.home(old[i].key - 1)
		for tb.slots[j].key != 0 {
			j = (j + 1) & mask
		}
		tb.slots[j] = old[i]
	}
}

// at returns entry i of c.
func (c *cell) at(i int) *entry {
	if i < inlineEntries {
		return &c.in[i]
	}
	return &c.more[i-inlineEntries]
}

func (c *cell) add(e entry) {
	if c.n < inlineEntries {
		c.in[c.n] = e
	} else {
		c.more = append(c.more, e)
	}
	c.n++
}

// remove removes t's entry; order within a cell is free.
func (c *cell) remove(t *thing) {
	for i := 0; i < c.n; i++ {
		if e := c.at(i); e.t == t {
			last := c.at(c.n - 1)
			*e, *last = *last, entry{}
			if c.n > inlineEntries {
				c.more = c.more[:c.n-1-inlineEntries]
			}
			c.n--
			return
		}
	}
}
