package index

import "math/bits"

// cellTable holds one shadow level's entries, a thing's entry in each cell
// it touches, hashed by cell number. Entries of a cell are kept in buckets
// of eight, two cache lines each; a cell with more has several buckets,
// all full but the last, so a walk ends at the first bucket with room.
// Most cells have one bucket: a heap of small blocks puts six or seven in
// a level-0 cell (see levelShifts), and buckets of four made most walks
// visit two. The table
// is open addressing with Robin Hood ordering: along the table, buckets
// are sorted by their home, so a cell's buckets lie together and a lookup
// stops at the first bucket homed after the cell's. Its size is not bound
// to powers of two, so its memory follows what it holds.
type cellTable struct {
	buckets []bucket
	mem     *region // what holds buckets when they are not on the Go heap (see newBuckets)
	used    int     // buckets in use
	entries int     // entries in them
	cells   int     // distinct cells
	shift   uint    // log2 of the level's cell width
	// sieve counts the cells whose home hashes to each of its slots, so
	// that while the table is sparse a lookup of a cell it lacks ends
	// without a walk: a level that holds few things, as the upper ones
	// mostly do, is looked at by every allocation that misses the lower.
	// It is made with the first cell (a checker of a short trace, as
	// property tests make by the thousand, never fills most levels).
	sieve *[sieveLen]uint16
	// sieveUpTo is how many cells the table may hold while lookups consult
	// the sieve: 0 for level 0, whose lookups mostly find their cell, so
	// that a look at the sieve would only cost; level 0 keeps none.
	sieveUpTo int
}

const sieveLen = 1 << 12

// absent reports whether cell k surely has no entry. An empty table has
// none, and may have no buckets yet.
func (tb *cellTable) absent(k uint64) bool {
	return tb.cells == 0 || tb.cells < tb.sieveUpTo && tb.sieve[sieveSlot(k)] == 0
}

func sieveSlot(k uint64) uint64 { return k * 0x9E3779B97F4A7C15 >> 52 }

const minBuckets = 32

// init empties the table for cells 1<<shift bytes wide; sieved says
// whether lookups consult the sieve. Buckets and sieve are made with the
// first entry.
func (tb *cellTable) init(shift uint, sieved bool) {
	freeBuckets(tb.mem)
	*tb = cellTable{shift: shift}
	if sieved {
		tb.sieveUpTo = sieveLen / 4
	}
}

// maxKeptBuckets bounds the buckets reset keeps: a table that grew past
// it for a big trace is let go rather than cleared for every short one.
const maxKeptBuckets = 256

// reset empties the table, as init left it, keeping its buckets (up to
// maxKeptBuckets) and its sieve, cleared. A table of any size at least
// minBuckets holds any cells: home scales to it.
func (tb *cellTable) reset() {
	bs, sieve := tb.buckets, tb.sieve
	if len(bs) > maxKeptBuckets {
		freeBuckets(tb.mem)
	}
	*tb = cellTable{shift: tb.shift, sieveUpTo: tb.sieveUpTo}
	if len(bs) <= maxKeptBuckets {
		clear(bs)
		tb.buckets = bs
	}
	if sieve != nil {
		clear(sieve[:])
		tb.sieve = sieve
	}
}

// cellOf is the cell whose entry e is.
func (tb *cellTable) cellOf(e *entry) uint64 { return e.lo>>tb.shift + e.part() }

// home is cell k's first bucket: a multiplicative hash, scaled to the
// table's size.
func (tb *cellTable) home(k uint64) int {
	hi, _ := bits.Mul64(k*0x9E3779B97F4A7C15, uint64(len(tb.buckets)))
	return int(hi)
}

// dist is how far bucket i lies past the home of cell k.
func (tb *cellTable) dist(i int, k uint64) int {
	d := i - tb.home(k)
	if d < 0 {
		d += len(tb.buckets)
	}
	return d
}

// cellIter walks the buckets of one cell.
type cellIter struct {
	tb   *cellTable
	k    uint64
	i, d int  // the next bucket to look at, and its distance from k's home
	done bool // the last bucket returned had room: it was the cell's last
}

func (tb *cellTable) cell(k uint64) cellIter {
	return cellIter{tb: tb, k: k, i: tb.home(k), done: tb.absent(k)}
}

// nextBucket returns the cell's next bucket, or nil after the last; seek
// does the walk past other cells' buckets. The hot paths (startAt, and
// seekCell for the loops that keep their place as an index) write the
// walk out instead, since nextBucket is too big for the compiler to inline.
func (it *cellIter) nextBucket() *bucket {
	if it.done {
		return nil
	}
	if b := &it.tb.buckets[it.i]; b[0].meta != 0 && it.tb.cellOf(&b[0]) == it.k {
		it.step(b)
		return b
	}
	return it.seek()
}

// step moves the walk past b, a bucket of its cell.
func (it *cellIter) step(b *bucket) {
	if it.i++; it.i == len(it.tb.buckets) {
		it.i = 0
	}
	it.d++
	it.done = b[bucketLen-1].meta == 0
}

// seek returns the cell's next bucket past those homed earlier, or nil.
func (it *cellIter) seek() *bucket {
	tb := it.tb
	for {
		b := &tb.buckets[it.i]
		if b[0].meta == 0 {
			return nil
		}
		bk := tb.cellOf(&b[0])
		if bk == it.k {
			it.step(b)
			return b
		}
		if tb.dist(it.i, bk) < it.d {
			return nil // homed after k's home: k has no bucket further on
		}
		if it.i++; it.i == len(tb.buckets) {
			it.i = 0
		}
		it.d++
	}
}

// seekCell returns the first bucket of cell k at or after bucket i (i may
// be len(buckets): the first), walking past buckets of cells homed no
// later than k's, or -1 where k has no bucket further on. It is
// nextBucket's walk for loops that keep their place as an index.
func (tb *cellTable) seekCell(k uint64, i int) int {
	bs := tb.buckets
	if i == len(bs) {
		i = 0
	}
	for d := tb.dist(i, k); ; d++ {
		b := &bs[i]
		if b[0].meta == 0 {
			return -1
		}
		if bk := tb.cellOf(&b[0]); bk == k {
			return i
		} else if tb.dist(i, bk) < d {
			return -1 // homed after k's home: k has no bucket further on
		}
		if i++; i == len(bs) {
			i = 0
		}
	}
}

// firstBucket returns the index of cell k's first bucket, or -1.
func (tb *cellTable) firstBucket(k uint64) int {
	if tb.absent(k) {
		return -1
	}
	return tb.seekCell(k, tb.home(k))
}

// startAt returns cell k's entry of a thing that starts at a, or nil: the
// first it finds, which is the only one while things do not nest. It is
// the walk of nextBucket written out as one loop, since it is on the path
// of every free and malloc.
func (tb *cellTable) startAt(k, a uint64) *entry {
	if tb.absent(k) {
		return nil
	}
	bs := tb.buckets
	i := tb.home(k)
	for d := 0; ; d++ {
		b := &bs[i]
		if b[0].meta == 0 {
			return nil
		}
		if bk := tb.cellOf(&b[0]); bk == k {
			if e := b.startingAt(a); e != nil {
				return e
			}
			if b[bucketLen-1].meta == 0 {
				return nil // the cell's last bucket
			}
		} else if tb.dist(i, bk) < d {
			return nil // homed after k's home: k has no bucket further on
		}
		if i++; i == len(bs) {
			i = 0
		}
	}
}

// holding returns cell k's entry of a thing whose range holds a, or nil:
// the first it finds, which is the only one while things do not nest.
func (tb *cellTable) holding(k, a uint64) *entry {
	for i := tb.firstBucket(k); i >= 0; i = tb.seekCell(k, i+1) {
		b := &tb.buckets[i]
		if e := b.holding(a); e != nil {
			return e
		}
		if b[bucketLen-1].meta == 0 {
			return nil // the cell's last bucket
		}
	}
	return nil
}

// startsIn reports whether cell k has an entry of a thing that starts in
// [lo, hi).
func (tb *cellTable) startsIn(k, lo, hi uint64) bool {
	for i := tb.firstBucket(k); i >= 0; i = tb.seekCell(k, i+1) {
		b := &tb.buckets[i]
		if b.startsIn(lo, hi) {
			return true
		}
		if b[bucketLen-1].meta == 0 {
			return false // the cell's last bucket
		}
	}
	return false
}

// has reports whether cell k has an entry.
func (tb *cellTable) has(k uint64) bool {
	it := tb.cell(k)
	return it.nextBucket() != nil
}

// add enters e and reports whether it is its cell's first entry.
func (tb *cellTable) add(e entry) (first bool) {
	tb.entries++
	it := tb.cell(tb.cellOf(&e))
	first = true
	for b := it.nextBucket(); b != nil; b = it.nextBucket() {
		first = false
		if n := b.used(); n < bucketLen { // only the cell's last bucket has room
			b[n] = e
			return false
		}
	}
	// At most three quarters full: past that, the runs a lookup walks to
	// find a cell, or to learn that it has no bucket, grow fast, and most
	// of a malloc or free is such a walk.
	//
	// The table doubles. A table that grew by a quarter at a time held
	// more per bucket on average, but left a trail of old tables, each too
	// small to hold the next, that the garbage collector frees only later
	// and the runtime seldom returns: an mtrace replay of a million live
	// blocks peaked at about 190 bytes of RSS per block, against about 130
	// when the table doubles (sizes from 400,000 to 1.3 million blocks).
	// Big tables are now unmapped as soon as they are left (bucketmem.go),
	// so no trail stays, but a resize still holds the old table and the
	// new one at once: grown by half, a replay of that million peaked
	// higher (110.8 MiB against 107.6 doubling), its last resize coming
	// nearer its end, with more things made.
	if (tb.used+1)*4 > len(tb.buckets)*3 {
		tb.resize(len(tb.buckets) * 2)
	}
	tb.place(bucket{e})
	tb.used++
	if first {
		tb.cells++
		if tb.sieveUpTo > 0 {
			if tb.sieve == nil {
				tb.sieve = new([sieveLen]uint16)
			}
			if s := &tb.sieve[sieveSlot(tb.cellOf(&e))]; *s < 1<<16-1 {
				*s++ // a count that reaches the top stays there: its slot is never empty again
			}
		}
	}
	return first
}

// place puts b after the buckets homed where it is or earlier, and moves
// the buckets from there to the next hole one place on (Robin Hood
// insertion, done as a shift so that buckets keep their order).
func (tb *cellTable) place(b bucket) {
	i, d := tb.home(tb.cellOf(&b[0])), 0
	for {
		s := &tb.buckets[i]
		if s[0].meta == 0 || tb.dist(i, tb.cellOf(&s[0])) < d {
			break
		}
		if i++; i == len(tb.buckets) {
			i = 0
		}
		d++
	}
	for {
		s := &tb.buckets[i]
		if s[0].meta == 0 {
			*s = b
			return
		}
		*s, b = b, *s
		if i++; i == len(tb.buckets) {
			i = 0
		}
	}
}

// find returns cell k's entry for ref r, or nil.
func (tb *cellTable) find(k uint64, r ref) *entry {
	it := tb.cell(k)
	for b := it.nextBucket(); b != nil; b = it.nextBucket() {
		if e := b.withRef(r); e != nil {
			return e
		}
	}
	return nil
}

// remove removes cell k's entry for ref r and reports whether the cell
// still has entries. The cell's last entry takes its place, so that only
// the cell's last bucket has room.
func (tb *cellTable) remove(k uint64, r ref) bool {
	var hole *entry
	var last *bucket // the cell's last bucket
	lastAt := 0      // and where it is
	for i := tb.firstBucket(k); i >= 0; i = tb.seekCell(k, i+1) {
		b := &tb.buckets[i]
		last, lastAt = b, i
		if e := b.withRef(r); e != nil {
			hole = e
		}
		if b[bucketLen-1].meta == 0 {
			break
		}
	}
	if hole == nil {
		return last != nil
	}
	n := last.used()
	*hole, last[n-1] = last[n-1], entry{}
	tb.entries--
	if n > 1 {
		return true
	}
	tb.drop(lastAt)
	if !tb.has(k) {
		tb.cells--
		if tb.sieveUpTo > 0 {
			if s := &tb.sieve[sieveSlot(k)]; *s < 1<<16-1 {
				*s--
			}
		}
		return false
	}
	return true
}

// drop removes the emptied bucket at i (i may be -1: the last).
func (tb *cellTable) drop(i int) {
	n := len(tb.buckets)
	if i < 0 {
		i += n
	}
	// Backward shift: pull the following displaced buckets one place back
	// into the hole, which keeps the Robin Hood order.
	for {
		j := i + 1
		if j == n {
			j = 0
		}
		s := &tb.buckets[j]
		if s[0].meta == 0 || tb.dist(j, tb.cellOf(&s[0])) == 0 {
			break
		}
		tb.buckets[i] = *s
		i = j
	}
	tb.buckets[i] = bucket{}
	tb.used--
	if n > minBuckets && tb.used*8 < n {
		tb.resize(n / 2)
	}
}

func (tb *cellTable) resize(n int) {
	old := tb.buckets
	// Re-place the buckets in their order along the table, from the start
	// of a run (a bucket at its home, or a hole), so that a cell's buckets
	// keep their order even when the run wraps around the end: only the
	// last may have room.
	start := 0
	for start < len(old) && old[start][0].meta != 0 && tb.dist(start, tb.cellOf(&old[start][0])) != 0 {
		start++
	}
	oldMem := tb.mem
	tb.buckets, tb.mem = newBuckets(max(n, minBuckets))
	for i := range old {
		if b := &old[(start+i)%len(old)]; b[0].meta != 0 {
			tb.place(*b)
		}
	}
	freeBuckets(oldMem)
}
