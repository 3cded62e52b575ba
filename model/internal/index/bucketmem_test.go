package index

import (
	"runtime"
	"testing"
	"time"
	"unsafe"
)

// TestBigTableGivesBackItsMemory holds a table that grows past mapMin to
// its contract with mapped buckets: every entry found through the
// resizes, and the mapped memory given back when the table shrinks below
// mapMin, when it is reset, and when it is dropped without either.
func TestBigTableGivesBackItsMemory(t *testing.T) {
	maps := mapsBuckets()
	before := Mapped()
	n := 4 * mapMin / int(unsafe.Sizeof(bucket{})) // cells of one entry each: a table of some 4 MiB
	var tb cellTable
	fill := func() {
		tb.init(10, false)
		for k := range n {
			tb.add(entry{lo: uint64(k) << 10, meta: uint64(k+1) | 1<<metaLen})
		}
		if maps && Mapped() <= before {
			t.Fatalf("a table of %d buckets holds no mapped memory", len(tb.buckets))
		}
	}
	found := func(from int) {
		t.Helper()
		for k := from; k < n; k++ {
			if e := tb.startAt(uint64(k), uint64(k)<<10); e == nil || e.ref() != ref(k+1) {
				t.Fatalf("cell %d: entry %v, want ref %d", k, e, k+1)
			}
		}
	}

	fill()
	found(0)
	keep := n - 10
	for k := range keep {
		tb.remove(uint64(k), ref(k+1))
	}
	found(keep)
	if got := Mapped(); got != before {
		t.Errorf("shrunk to %d buckets, the table still holds %d mapped bytes", len(tb.buckets), got-before)
	}

	fill()
	tb.reset()
	if got := Mapped(); got != before {
		t.Errorf("reset, the table still holds %d mapped bytes", got-before)
	}

	fill()
	tb = cellTable{} // dropped: its region's cleanup gives the memory back
	deadline := time.Now().Add(10 * time.Second)
	for Mapped() != before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := Mapped(); got != before {
		t.Errorf("dropped, the table's region still holds %d mapped bytes", got-before)
	}
}

// mapsBuckets reports whether this system maps big tables' buckets.
func mapsBuckets() bool {
	mem, ok := mapBuckets(mapMin)
	if ok {
		unmapBuckets(mem)
	}
	return ok
}
