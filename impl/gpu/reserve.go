package gpu

import (
	"fmt"

	"github.com/tlcheck/tlcheck/traces"
)

// Reservations and mapped pages: CUDA's virtual memory management
// (cuMemAddressReserve, cuMemMap, cuMemUnmap), on which PyTorch's
// expandable segments grow and shrink one range of addresses instead of
// reserving segments of fixed sizes. A reservation costs address space
// only, and is not recorded (PyTorch records no entry for it); each map and
// unmap of its pages is, as dev_map and dev_unmap, and the mapped bytes
// count toward the device's capacity as segments do.

// PageSize is the granularity of mapping: a reservation's size and every
// map and unmap are whole pages (PyTorch maps 2 MiB pages for its small
// pool and 20 MiB for its large one; 2 MiB is CUDA's granularity).
const PageSize = 2 << 20

// Reservation is a range of the device's addresses reserved for mapping.
type Reservation struct {
	Addr   traces.Addr
	Size   uint64
	mapped []bool // by page
	live   bool
}

// Mapped returns the bytes of r mapped now.
func (r *Reservation) Mapped() uint64 {
	var n uint64
	for _, m := range r.mapped {
		if m {
			n += PageSize
		}
	}
	return n
}

// Reserve reserves size bytes of addresses (rounded up to whole pages),
// placed as segments are. It maps nothing.
func (d *Device) Reserve(size uint64) (*Reservation, error) {
	n := roundUp(size, PageSize)
	if size == 0 || n < size {
		return nil, fmt.Errorf("gpu: Reserve(%d): a reservation needs a size of whole pages below 2^64", size)
	}
	var a traces.Addr
	if d.placer == nil {
		a = d.place(n)
	} else if a = d.placer(n); !d.room(a, n) {
		return nil, fmt.Errorf("gpu: Reserve(%d): the placement gave %s, not a free 512-aligned range", n, a)
	}
	r := &Reservation{Addr: a, Size: n, mapped: make([]bool, n/PageSize), live: true}
	d.resv[a] = r
	return r, nil
}

// pages returns the pages [off, off+n) of r names, or an error.
func (r *Reservation) pages(op string, off, n uint64) (lo, hi uint64, err error) {
	if !r.live {
		return 0, 0, fmt.Errorf("gpu: %s: the reservation at %s was released", op, r.Addr)
	}
	if off%PageSize != 0 || n%PageSize != 0 || n == 0 || off > r.Size || n > r.Size-off {
		return 0, 0, fmt.Errorf("gpu: %s(%s+%d, %d): not whole pages of the reservation (%d bytes)", op, r.Addr, off, n, r.Size)
	}
	return off / PageSize, (off + n) / PageSize, nil
}

// DevMap maps the n bytes at offset off of r (cuMemMap) and returns their
// address. Pages mapped already are an error; past the capacity it returns
// an *OutOfMemoryError and records a failed map (dev_map at NULL).
func (d *Device) DevMap(r *Reservation, off, n uint64) (traces.Addr, error) {
	lo, hi, err := r.pages("DevMap", off, n)
	if err != nil {
		return 0, err
	}
	for p := lo; p < hi; p++ {
		if r.mapped[p] {
			return 0, fmt.Errorf("gpu: DevMap(%s+%d, %d): page %d is mapped already", r.Addr, off, n, p)
		}
	}
	if n > d.capacity-d.used {
		d.emit(traces.Event{Op: traces.OpDevMap, Addr: 0, Size: n})
		return 0, &OutOfMemoryError{Op: "DevMap", Requested: n, Capacity: d.capacity, Free: d.capacity - d.used, Reserved: d.used}
	}
	for p := lo; p < hi; p++ {
		r.mapped[p] = true
	}
	d.used += n
	a := r.Addr + traces.Addr(off)
	d.emit(traces.Event{Op: traces.OpDevMap, Addr: a, Size: n})
	return a, nil
}

// DevUnmap unmaps the n bytes at offset off of r (cuMemUnmap). Pages not
// mapped are an error, recorded all the same so that replaying the trace
// flags the same event.
func (d *Device) DevUnmap(r *Reservation, off, n uint64) error {
	d.emit(traces.Event{Op: traces.OpDevUnmap, Addr: r.Addr + traces.Addr(off), Size: n})
	lo, hi, err := r.pages("DevUnmap", off, n)
	if err != nil {
		return err
	}
	for p := lo; p < hi; p++ {
		if !r.mapped[p] {
			return fmt.Errorf("gpu: DevUnmap(%s+%d, %d): page %d is not mapped", r.Addr, off, n, p)
		}
	}
	for p := lo; p < hi; p++ {
		r.mapped[p] = false
	}
	d.used -= n
	return nil
}

// Release gives r's addresses back (cuMemAddressFree). Its pages must all
// be unmapped first.
func (d *Device) Release(r *Reservation) error {
	if !r.live {
		return fmt.Errorf("gpu: Release(%s): released already", r.Addr)
	}
	if m := r.Mapped(); m > 0 {
		return fmt.Errorf("gpu: Release(%s): %d bytes of it are still mapped", r.Addr, m)
	}
	r.live = false
	delete(d.resv, r.Addr)
	if d.placer == nil {
		d.unplace(span{r.Addr, r.Size})
	}
	return nil
}
