package index

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// A big cell table's buckets live outside the Go heap, in memory mapped
// from the operating system and unmapped as soon as the table grows out
// of it (see mapBuckets, per system). On the Go heap, the table a resize
// leaves behind stays resident until the next garbage collection, which
// on a replay whose memory grows steadily comes only when the heap has
// doubled: an mtrace replay of a million live blocks peaked with its
// level-0 table's last two sizes, 17 and 34 MB, resident at once, about
// 17 bytes of RSS per live block for nothing. Buckets hold no pointers,
// so the collector need not see them.

// mapMin is the smallest table, in bytes, whose buckets are mapped: the
// tables of short traces, which checkers reused trace after trace keep
// (see cellTable.reset), stay on the Go heap.
const mapMin = 1 << 20

// region is a table's mapped memory; nil for buckets on the Go heap.
type region struct {
	mem     []byte
	cleanup runtime.Cleanup
}

// mappedBytes is the memory all regions hold now.
var mappedBytes atomic.Int64

// Mapped returns the bytes of bucket memory the indexes of this process
// hold outside the Go heap, for measures of memory (the model's
// benchmarks) that read the heap's statistics.
func Mapped() int64 { return mappedBytes.Load() }

// newBuckets returns an empty array of n buckets and the region that
// holds it (nil: the Go heap).
func newBuckets(n int) ([]bucket, *region) {
	size := n * int(unsafe.Sizeof(bucket{}))
	if size < mapMin {
		return make([]bucket, n), nil
	}
	mem, ok := mapBuckets(size)
	if !ok {
		return make([]bucket, n), nil // no mapping on this system, or none now: the heap will do
	}
	mappedBytes.Add(int64(size))
	r := &region{mem: mem}
	// A table dropped without freeBuckets (an index the caller lets go)
	// gives its region back when the region is collected: the table's
	// only pointer to it goes with the table.
	r.cleanup = runtime.AddCleanup(r, unmapRegion, mem)
	return unsafe.Slice((*bucket)(unsafe.Pointer(unsafe.SliceData(mem))), n), r
}

// freeBuckets gives r's memory back at once; the buckets it held must not
// be read again. A nil r (the Go heap) is left to the collector.
func freeBuckets(r *region) {
	if r == nil {
		return
	}
	r.cleanup.Stop()
	unmapRegion(r.mem)
	r.mem = nil
}

func unmapRegion(mem []byte) {
	unmapBuckets(mem)
	mappedBytes.Add(-int64(len(mem)))
}
