package gpu

import (
	"fmt"
	"io"
	"strconv"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// DType is a tensor's element type, numbered as TensorLogic's dtype_id.
type DType uint8

// The dtypes of TensorLogic's calculate_bytes.
const (
	F32 DType = iota
	F64
	I32
	I64
	U8
	F16
	BF16
)

// Size returns the bytes of one element; an unknown dtype counts as F32's
// 4, as TensorLogic's calculate_bytes does.
func (d DType) Size() uint64 {
	switch d {
	case F64, I64:
		return 8
	case U8:
		return 1
	case F16, BF16:
		return 2
	}
	return 4
}

// Key is what the persistent pool files a free tensor under: TensorLogic's
// (num_elements, dtype_id, device_id).
type Key struct {
	Elements uint64
	DType    DType
	Device   uint8
	salt     traces.Addr // only the key-never-matches fault sets it
}

// Bytes is the size of a tensor of this key.
func (k Key) Bytes() uint64 { return k.Elements * k.DType.Size() }

// PersistentOptions configure a PersistentPool.
type PersistentOptions struct {
	// PreallocateBytes is reserved as one segment when the pool is made,
	// and new tensors are carved from it until it is used up
	// (TL_GPU_PREALLOCATE_MB; see PreallocateFromEnv). 0: none.
	PreallocateBytes uint64
	Faults           []impl.Fault
}

// PreallocateFromEnv reads TL_GPU_PREALLOCATE_MB through getenv (os.Getenv
// in a program) and returns it in bytes; unset or empty is 0. A value that
// is not a non-negative integer of MiB is an error naming the variable.
func PreallocateFromEnv(getenv func(string) string) (uint64, error) {
	s := getenv("TL_GPU_PREALLOCATE_MB")
	if s == "" {
		return 0, nil
	}
	mb, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("gpu: TL_GPU_PREALLOCATE_MB=%q: want a whole number of MiB", s)
	}
	return mb << 20, nil
}

// PoolStats are the persistent pool's counters, TensorLogic's PoolStats.
type PoolStats struct {
	TotalAllocatedBytes uint64 // device bytes the pool has reserved, preallocation included; never decreases
	FreeCount           uint64 // tensors in the free lists
	FreeBytes           uint64 // their bytes
	Hits                uint64 // acquires served from a free list
	Misses              uint64 // acquires that needed new memory
}

// HitRate is Hits / (Hits + Misses), 0 before any acquire.
func (s PoolStats) HitRate() float64 {
	if s.Hits+s.Misses == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Hits+s.Misses)
}

// PersistentPool is TensorLogic's persistent GPU pool (V4.0): a released
// tensor's memory is never given back to the device but filed under its
// Key, and the next Acquire of that key takes it back (last released,
// first reused). A pointer released while already in its free list is
// ignored (the duplicate-pointer guard). It is not safe for concurrent use.
type PersistentPool struct {
	dev    *Device
	free   map[Key][]traces.Addr
	active map[traces.Addr]Key
	filed  map[traces.Addr]Key // the key each free pointer is filed under
	stats  PoolStats
	pre    traces.Addr // the preallocated segment, 0 if none
	preOff uint64      // bytes of it carved so far
	preLen uint64
	f      faults
}

// NewPersistent returns a persistent pool on dev, with its preallocation
// reserved (an *OutOfMemoryError if the device cannot hold it).
func NewPersistent(dev *Device, opts PersistentOptions) (*PersistentPool, error) {
	f, err := parseFaults(opts.Faults)
	if err != nil {
		return nil, err
	}
	p := &PersistentPool{dev: dev, f: f, free: map[Key][]traces.Addr{}, active: map[traces.Addr]Key{}, filed: map[traces.Addr]Key{}}
	if opts.PreallocateBytes > 0 {
		a, err := dev.DevMalloc(opts.PreallocateBytes)
		if err != nil {
			return nil, fmt.Errorf("gpu: preallocating %d bytes: %w", opts.PreallocateBytes, err)
		}
		p.pre, p.preLen = a, roundUp(opts.PreallocateBytes, segmentAlign)
		p.stats.TotalAllocatedBytes += p.preLen
	}
	return p, nil
}

// Acquire returns a tensor buffer for k, recorded as pool_get: the last
// one released under k if there is one (a hit), else new memory (a miss)
// carved from the preallocation or reserved as a segment of its own. A
// key of zero bytes is NULL and records nothing.
func (p *PersistentPool) Acquire(k Key) (traces.Addr, error) {
	n := k.Bytes()
	if n == 0 {
		return 0, nil
	}
	if k.Elements != n/k.DType.Size() || roundUp(n, segmentAlign) < n {
		return 0, fmt.Errorf("gpu: Acquire(%d elements of dtype %d): size overflows", k.Elements, k.DType)
	}
	k.salt = 0
	if list := p.free[k]; len(list) > 0 {
		a := list[len(list)-1]
		p.free[k] = list[:len(list)-1]
		if p.f.reuseOldest { // the free list read as a queue, not a stack
			a = list[0]
			p.free[k] = list[1:]
		}
		delete(p.filed, a)
		p.stats.FreeCount--
		p.stats.FreeBytes -= n
		p.stats.Hits++
		p.active[a] = k
		p.dev.emit(traces.Event{Op: traces.OpPoolGet, Addr: a, Size: n})
		return a, nil
	}
	p.stats.Misses++
	var a traces.Addr
	m := roundUp(n, segmentAlign)
	fits := m <= p.preLen-p.preOff
	if p.f.preallocExact {
		fits = m < p.preLen-p.preOff // an exact fit is taken for no room
	}
	if p.pre != 0 && fits {
		a = p.pre + traces.Addr(p.preOff)
		p.preOff += m
	} else {
		var err error
		if a, err = p.dev.DevMalloc(n); err != nil {
			return 0, err
		}
		p.stats.TotalAllocatedBytes += m
	}
	p.active[a] = k
	p.dev.emit(traces.Event{Op: traces.OpPoolGet, Addr: a, Size: n})
	return a, nil
}

// Release files the tensor at a under its key for reuse, recorded as
// pool_put; its memory stays reserved. A pointer already in the free
// lists is ignored and nothing is recorded (TensorLogic's duplicate
// guard: the books do not change), but the answer is an error, since the
// caller released twice. Any other pointer the pool did not hand out is
// an error, recorded so that replaying the trace flags it.
func (p *PersistentPool) Release(a traces.Addr) error {
	if a == 0 {
		return nil
	}
	k, ok := p.active[a]
	if !ok {
		fk, dup := p.filed[a]
		if !dup {
			p.dev.emit(traces.Event{Op: traces.OpPoolPut, Addr: a})
			return fmt.Errorf("gpu: Release(%s): not a tensor of this pool", a)
		}
		if !p.f.duplicateEntry {
			return fmt.Errorf("gpu: Release(%s): already in the free list (ignored)", a)
		}
		k = fk // the faulty pool files it a second time
	}
	delete(p.active, a)
	p.dev.emit(traces.Event{Op: traces.OpPoolPut, Addr: a})
	if p.f.keyNeverMatches {
		k.salt = a // filed under a key that no lookup builds
	}
	p.free[k] = append(p.free[k], a)
	p.filed[a] = k
	p.stats.FreeCount++
	p.stats.FreeBytes += k.Bytes()
	return nil
}

// Stats returns the pool's counters.
func (p *PersistentPool) Stats() PoolStats { return p.stats }

// Active returns how many tensors are handed out.
func (p *PersistentPool) Active() int { return len(p.active) }

// Dump writes the counters as TensorLogic's dump_stats does.
func (p *PersistentPool) Dump(w io.Writer) error {
	s := p.stats
	_, err := fmt.Fprintf(w, "=== PersistentGpuPool Stats ===\nTotal allocated: %d bytes (%d MB)\nFree pool: %d tensors, %d bytes (%d MB)\n"+
		"Acquire hits: %d\nAcquire misses: %d\nHit rate: %.2f%%\nActive tensors: %d\n===============================\n",
		s.TotalAllocatedBytes, s.TotalAllocatedBytes>>20, s.FreeCount, s.FreeBytes, s.FreeBytes>>20,
		s.Hits, s.Misses, s.HitRate()*100, len(p.active))
	return err
}

// Device returns the device the pool reserves its memory on.
func (p *PersistentPool) Device() *Device { return p.dev }
