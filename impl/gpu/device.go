package gpu

import (
	"fmt"
	"sort"

	"github.com/tlcheck/tlcheck/traces"
)

// Base is the first address a Device hands out. It is far from the
// simulated heap's and arenas' addresses, as device pointers are on a
// real machine, so a trace that mixes layers never confuses the spaces.
const Base traces.Addr = 0x7f0000000000

// segmentAlign is the alignment of every segment address: cudaMalloc
// returns pointers aligned to at least 512 bytes, and the caching
// allocator's sizes are multiples of 512 too.
const segmentAlign = 512

// OutOfMemoryError is a failed allocation: the device's, the caching
// allocator's after it has freed its cache and retried, or a request of
// MaxRequest or more, refused at once (OverLimit). Its message is
// modelled on PyTorch's "CUDA out of memory" message, so a user reads the
// same three numbers: what is allocated, what is reserved and what is free
// (for OverLimit, PyTorch's "more than 1EB" message).
type OutOfMemoryError struct {
	Op        string // "DevMalloc", "Malloc", ...: the call that failed
	Requested uint64 // bytes the device was asked for: the segment, as PyTorch's alloc_size (OverLimit: the request)
	Capacity  uint64 // the device's total capacity
	Free      uint64 // device bytes not reserved by anyone
	Allocated uint64 // bytes handed out to users by the allocator (0 for the bare device)
	Reserved  uint64 // bytes of the allocator's segments (the device's used bytes for the bare device)
	OverLimit bool   // a request of MaxRequest or more, refused before any cache was touched
}

func (e *OutOfMemoryError) Error() string {
	if e.OverLimit {
		return fmt.Sprintf("gpu: %s: out of memory. Tried to allocate more than 1EB memory.", e.Op)
	}
	return fmt.Sprintf("gpu: %s: out of memory. Tried to allocate %s. GPU 0 has a total capacity of %s of which %s is free. "+
		"Of the allocated memory %s is allocated by the allocator, and %s is reserved by the allocator but unallocated.",
		e.Op, human(e.Requested), human(e.Capacity), human(e.Free), human(e.Allocated), human(e.Reserved-min(e.Reserved, e.Allocated)))
}

// human writes n as PyTorch's format_size does: bytes, KiB, MiB or GiB
// with two decimals, each unit up to and including the next one's first
// value (1 MiB is "1024.00 KiB"), as PyTorch 2.11 on an H100 wrote it.
func human(n uint64) string {
	switch {
	case n <= 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n <= 1<<20:
		return fmt.Sprintf("%.2f KiB", float64(n)/(1<<10))
	case n <= 1<<30:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
}

// Device is a simulated GPU: a capacity in bytes and the segments
// reserved on it. DevMalloc and DevFree are cudaMalloc and cudaFree; each
// is recorded as dev_malloc or dev_free. Addresses are deterministic: the
// lowest free range of the address space that fits (first fit from Base),
// so a freed segment's address is handed out again, as drivers do.
type Device struct {
	capacity uint64
	used     uint64
	segs     map[traces.Addr]uint64 // live segments: address -> size
	resv     map[traces.Addr]*Reservation
	holes    []span      // free address ranges below top, by address
	top      traces.Addr // everything from here up is unused
	record   func(traces.Event)
	placer   func(size uint64) traces.Addr // PlaceWith's; nil: first fit
}

type span struct {
	lo traces.Addr
	n  uint64
}

// NewDevice returns a device of capacity bytes. record, if not nil,
// receives every event of the device and of the allocators built on it.
func NewDevice(capacity uint64, record func(traces.Event)) *Device {
	return &Device{capacity: capacity, segs: map[traces.Addr]uint64{}, resv: map[traces.Addr]*Reservation{}, top: Base, record: record}
}

// Capacity returns the device's capacity in bytes.
func (d *Device) Capacity() uint64 { return d.capacity }

// Used returns the bytes of the live segments and mapped pages.
func (d *Device) Used() uint64 { return d.used }

// Segments returns how many segments are live.
func (d *Device) Segments() int { return len(d.segs) }

func (d *Device) emit(ev traces.Event) {
	if d.record != nil {
		d.record(ev)
	}
}

// DevMalloc reserves a segment of size bytes (rounded up to 512) and
// returns its address. Past the capacity it returns an *OutOfMemoryError
// and records a failed cudaMalloc (dev_malloc at NULL). A size of 0 is an
// error, as cudaMalloc(0) gives no usable pointer.
func (d *Device) DevMalloc(size uint64) (traces.Addr, error) {
	if size == 0 {
		return 0, fmt.Errorf("gpu: DevMalloc(0): a segment needs a size")
	}
	n := roundUp(size, segmentAlign)
	if n < size || n > d.capacity-d.used {
		d.emit(traces.Event{Op: traces.OpDevMalloc, Addr: 0, Size: n})
		return 0, &OutOfMemoryError{Op: "DevMalloc", Requested: n, Capacity: d.capacity, Free: d.capacity - d.used, Reserved: d.used}
	}
	var a traces.Addr
	if d.placer == nil {
		a = d.place(n)
	} else if a = d.placer(n); !d.room(a, n) {
		d.emit(traces.Event{Op: traces.OpDevMalloc, Addr: 0, Size: n})
		return 0, fmt.Errorf("gpu: DevMalloc(%d): the placement gave %s, not a free 512-aligned range", n, a)
	}
	d.segs[a] = n
	d.used += n
	d.emit(traces.Event{Op: traces.OpDevMalloc, Addr: a, Size: n})
	return a, nil
}

// PlaceWith makes the device put each new segment at the address place
// gives for its size, instead of the lowest free range: a replay of a run
// on a real GPU (package cudarec) hands out the addresses CUDA did, since
// the caching allocator breaks ties between free blocks of one size by
// address. An address that is 0, not 512-aligned or overlapping a live
// segment makes that DevMalloc fail with an error that is not an
// *OutOfMemoryError. Call it before the first DevMalloc.
func (d *Device) PlaceWith(place func(size uint64) traces.Addr) { d.placer = place }

// room reports whether n bytes at a are free and 512-aligned.
func (d *Device) room(a traces.Addr, n uint64) bool {
	if a == 0 || a%segmentAlign != 0 || a+traces.Addr(n) < a {
		return false
	}
	for b, m := range d.segs {
		if a < b+traces.Addr(m) && b < a+traces.Addr(n) {
			return false
		}
	}
	for b, r := range d.resv {
		if a < b+traces.Addr(r.Size) && b < a+traces.Addr(n) {
			return false
		}
	}
	return true
}

// place finds the lowest free range of n bytes.
func (d *Device) place(n uint64) traces.Addr {
	for i, h := range d.holes {
		if h.n >= n {
			if h.n == n {
				d.holes = append(d.holes[:i], d.holes[i+1:]...)
			} else {
				d.holes[i] = span{h.lo + traces.Addr(n), h.n - n}
			}
			return h.lo
		}
	}
	a := d.top
	d.top += traces.Addr(n)
	return a
}

// DevFree returns the segment at a. An address that is not a live
// segment's is an error, recorded all the same so that replaying the
// trace flags the same event.
func (d *Device) DevFree(a traces.Addr) error {
	d.emit(traces.Event{Op: traces.OpDevFree, Addr: a})
	n, ok := d.segs[a]
	if !ok {
		return fmt.Errorf("gpu: DevFree(%s): not a live segment", a)
	}
	delete(d.segs, a)
	d.used -= n
	if d.placer == nil {
		d.unplace(span{a, n})
	}
	return nil
}

// unplace gives a range back, merging it with its neighbours and with top.
func (d *Device) unplace(s span) {
	i := sort.Search(len(d.holes), func(i int) bool { return d.holes[i].lo > s.lo })
	d.holes = append(d.holes, span{})
	copy(d.holes[i+1:], d.holes[i:])
	d.holes[i] = s
	if i+1 < len(d.holes) && s.lo+traces.Addr(s.n) == d.holes[i+1].lo {
		d.holes[i].n += d.holes[i+1].n
		d.holes = append(d.holes[:i+1], d.holes[i+2:]...)
	}
	if i > 0 && d.holes[i-1].lo+traces.Addr(d.holes[i-1].n) == d.holes[i].lo {
		d.holes[i-1].n += d.holes[i].n
		d.holes = append(d.holes[:i], d.holes[i+1:]...)
		i--
	}
	if last := d.holes[len(d.holes)-1]; last.lo+traces.Addr(last.n) == d.top {
		d.top = last.lo
		d.holes = d.holes[:len(d.holes)-1]
	}
}

// End records the end of the run; what is still reserved is the model's
// to judge (a segment never returned is a leak).
func (d *Device) End() { d.emit(traces.Event{Op: traces.OpEnd}) }

func roundUp(n, to uint64) uint64 { return (n + to - 1) / to * to }
