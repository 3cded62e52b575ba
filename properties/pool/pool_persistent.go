package pool

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
)

// persistentRules is the persistent pool's contract stated a second time,
// apart from the pool, so that the property's expected values never come
// from the thing under test: which address each acquire must return, and
// what the counters and the device must then say. The pool never gives a
// segment back, so its segments lie end to end from gpu.Base in the order
// they were reserved (the device places first fit and never has a hole),
// the preallocation first.
type persistentRules struct {
	capacity uint64
	reserved uint64                    // device bytes: the segments, end to end from gpu.Base
	preLen   uint64                    // the preallocated region at gpu.Base, rounded up to 512
	preOff   uint64                    // bytes of it carved so far
	free     map[gpu.Key][]traces.Addr // each key's free tensors, the last released last
	stats    gpu.PoolStats
}

func align512(n uint64) uint64 { return (n + 511) &^ 511 }

func newPersistentRules(capacity, prealloc uint64) *persistentRules {
	r := &persistentRules{capacity: capacity, preLen: align512(prealloc), free: map[gpu.Key][]traces.Addr{}}
	r.reserved = r.preLen
	r.stats.TotalAllocatedBytes = r.preLen
	return r
}

// acquire applies an acquire of k and returns the address the pool must
// hand out and how it must get it ("reused", "carved" or "reserved"), or
// "" when the device cannot hold it (out of memory).
func (r *persistentRules) acquire(k gpu.Key) (traces.Addr, string) {
	if list := r.free[k]; len(list) > 0 { // last released, first reused
		a := list[len(list)-1]
		r.free[k] = list[:len(list)-1]
		r.stats.Hits++
		r.stats.FreeCount--
		r.stats.FreeBytes -= k.Bytes()
		return a, "reused"
	}
	r.stats.Misses++
	m := align512(k.Bytes())
	if m <= r.preLen-r.preOff { // what is left of the region, an exact fit included
		a := gpu.Base + traces.Addr(r.preOff)
		r.preOff += m
		return a, "carved"
	}
	if m > r.capacity-r.reserved {
		return 0, ""
	}
	a := gpu.Base + traces.Addr(r.reserved)
	r.reserved += m
	r.stats.TotalAllocatedBytes += m
	return a, "reserved"
}

func (r *persistentRules) release(t liveTensor) {
	r.free[t.key] = append(r.free[t.key], t.addr)
	r.stats.FreeCount++
	r.stats.FreeBytes += t.key.Bytes()
}

type liveTensor struct {
	addr traces.Addr
	key  gpu.Key
}

func runPersistent(p Program, dev *gpu.Device, faults []impl.Fault, rec *impl.Recording) *Failure {
	fail := func(step int, prop, msg string) *Failure {
		return &Failure{prop, step, msg, slices.Clone(rec.Events())}
	}
	if align512(p.Preallocate) > p.Capacity {
		return &Failure{"Setup", 0, fmt.Sprintf("a preallocation of %d bytes on a device of %d", p.Preallocate, p.Capacity), nil}
	}
	pool, err := gpu.NewPersistent(dev, gpu.PersistentOptions{PreallocateBytes: p.Preallocate, Faults: faults})
	if err != nil {
		return &Failure{"Setup", 0, err.Error(), nil}
	}
	rules := newPersistentRules(p.Capacity, p.Preallocate)
	var live, released []liveTensor
	used := dev.Used()
	for i, o := range p.Ops {
		switch o.Kind {
		case "acquire":
			k := gpu.Key{Elements: o.Size, DType: o.DType, Device: o.Device}
			carved := rules.preOff
			want, how := rules.acquire(k)
			a, err := pool.Acquire(k)
			var oom *gpu.OutOfMemoryError
			switch {
			case errors.As(err, &oom) && how != "":
				return fail(i, "NoFalseOOM", fmt.Sprintf("acquire of %d elements of dtype %d on device %d: %v; want %s memory at %s", k.Elements, k.DType, k.Device, err, how, want))
			case err != nil && how != "":
				return fail(i, "Acquire", err.Error())
			case err == nil && how == "":
				return fail(i, "Reserved", fmt.Sprintf("acquire of %d elements of dtype %d on device %d got %s, but %d of the device's %d bytes are reserved: no room for %d more",
					k.Elements, k.DType, k.Device, a, rules.reserved, p.Capacity, align512(k.Bytes())))
			case how == "reused" && a != want:
				return fail(i, "Reuse", fmt.Sprintf("acquire of %d elements of dtype %d on device %d got %s; want %s, the last released of that key's free tensors %v",
					k.Elements, k.DType, k.Device, a, want, append(rules.free[k], want)))
			case a != want:
				return fail(i, "Place", fmt.Sprintf("acquire of %d elements of dtype %d on device %d got %s; want %s memory at %s (preallocation %d bytes, %d carved before)",
					k.Elements, k.DType, k.Device, a, how, want, rules.preLen, carved))
			}
			if err == nil {
				released = slices.DeleteFunc(released, func(t liveTensor) bool { return t.addr == a })
				live = append(live, liveTensor{a, k})
			}
		case "release":
			if len(live) == 0 {
				continue
			}
			j := o.Index % len(live)
			t := live[j]
			if err := pool.Release(t.addr); err != nil {
				return fail(i, "Release", err.Error())
			}
			live = slices.Delete(live, j, j+1)
			released = append(released, t)
			rules.release(t)
		case "rerelease":
			if len(released) == 0 {
				continue
			}
			if err := pool.Release(released[o.Index%len(released)].addr); err == nil {
				return fail(i, "Guard", fmt.Sprintf("a second release of %s was accepted", released[o.Index%len(released)].addr))
			}
		}
		if got := pool.Stats(); got != rules.stats {
			return fail(i, "PoolStats", fmt.Sprintf("stats %+v, the rules say %+v", got, rules.stats))
		}
		if dev.Used() < used {
			return fail(i, "NeverReturns", fmt.Sprintf("the device's reserved bytes fell from %d to %d", used, dev.Used()))
		}
		used = dev.Used()
		if used != rules.reserved {
			return fail(i, "Reserved", fmt.Sprintf("the device holds %d bytes, the rules say %d", used, rules.reserved))
		}
		if pool.Active() != len(live) {
			return fail(i, "Live", fmt.Sprintf("%d tensors active by the books, %d by the calls", pool.Active(), len(live)))
		}
	}
	for _, t := range live {
		if err := pool.Release(t.addr); err != nil {
			return fail(len(p.Ops), "Release", err.Error())
		}
	}
	// The pool keeps its segments until the process exits, by design; the
	// model's leak check at end covers pool blocks not put back, not
	// segments.
	dev.End()
	return nil
}
