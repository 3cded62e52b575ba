package torchsnap

import (
	"fmt"
	"math/bits"
)

// What tlcheck keeps of an entry, a block and a segment once each is read
// whole, and the accessors of their fields, which name the place and what
// was found.

// The typed accessors name the place and what was found.

func (o *obj) has(f int) bool { return o.set&(1<<f) != 0 }

func field(o *obj, f int, key string, pl place) (val, error) {
	if !o.has(f) {
		return val{}, &Error{Where: pl.String(), Err: fmt.Errorf("missing %q", key)}
	}
	return o.field(f), nil
}

func strField(o *obj, f int, key string, pl place) (string, error) {
	v, err := field(o, f, key, pl)
	if err != nil {
		return "", err
	}
	switch v.k {
	case kStr:
		return v.str(), nil
	case kLong:
		return "", &Error{Where: pl.fieldOf(key).String(), Err: fmt.Errorf("a string of %d bytes, over the limit of strings that tlcheck reads (Limits.MaxString)", v.i)}
	}
	return "", &Error{Where: pl.fieldOf(key).String(), Err: fmt.Errorf("want a string, got %s", typeName(v))}
}

func intField(o *obj, f int, key string, pl place) (int64, error) {
	v, err := field(o, f, key, pl)
	if err != nil {
		return 0, err
	}
	if v.k == kInt {
		return v.i, nil
	}
	return 0, &Error{Where: pl.fieldOf(key).String(), Err: fmt.Errorf("want a 64-bit integer, got %s", typeName(v))}
}

func uintField(o *obj, f int, key string, pl place) (uint64, error) {
	v, err := field(o, f, key, pl)
	if err != nil {
		return 0, err
	}
	switch {
	case v.k == kInt && v.i >= 0:
		return uint64(v.i), nil
	case v.k == kUint:
		return uint64(v.i), nil
	}
	return 0, &Error{Where: pl.fieldOf(key).String(), Err: fmt.Errorf("want a non-negative integer below 2^64, got %s", typeName(v))}
}

// siteField returns the site of a dict's frames, or -1.
func siteField(o *obj, f int) int32 {
	if !o.has(f) {
		return -1
	}
	return int32(o.field(f).i)
}

// wraps reports whether a block of size bytes at addr would pass 2^64
// (one that ends at 2^64 exactly has its last byte at 2^64-1).
func wraps(addr, size uint64) bool {
	end, carry := bits.Add64(addr, size, 0)
	return carry != 0 && end != 0
}

func errWraps(pl place, addr, size uint64) error {
	return &Error{Where: pl.String(), Err: fmt.Errorf("address 0x%x plus size %d passes 2^64", addr, size)}
}

func (sh *shaper) finishEntry(o *obj, pl place) (val, error) {
	e := entry{site: siteField(o, 5)}
	act, err := strField(o, 0, "action", pl)
	if err != nil {
		return val{}, err
	}
	switch act {
	case "alloc", "segment_alloc":
		e.action = aAlloc
		if act == "segment_alloc" {
			e.action = aSegmentAlloc
		}
		if e.size, err = uintField(o, 2, "size", pl); err != nil {
			return val{}, err
		}
		if e.addr, err = uintField(o, 1, "addr", pl); err != nil {
			return val{}, err
		}
	case "free_completed", "segment_free":
		e.action = aFreeCompleted
		if act == "segment_free" {
			e.action = aSegmentFree
		}
		if e.addr, err = uintField(o, 1, "addr", pl); err != nil {
			return val{}, err
		}
		if o.has(2) {
			if e.size, err = uintField(o, 2, "size", pl); err != nil {
				return val{}, err
			}
		}
	case "free_requested":
		e.action = aFreeRequested
		if o.has(1) { // for Reader.Pending
			if e.addr, err = uintField(o, 1, "addr", pl); err != nil {
				return val{}, err
			}
		}
	case "oom":
		// No change of state (see the package comment), but the request
		// that failed and the device's free bytes, which PyTorch writes
		// as the entry's size and addr, explain it (Reader.OOMs).
		e.action = aOOM
		if o.has(2) {
			if e.size, err = uintField(o, 2, "size", pl); err != nil {
				return val{}, err
			}
		}
		if o.has(1) {
			if e.addr, err = uintField(o, 1, "addr", pl); err != nil {
				return val{}, err
			}
		}
	case "snapshot", "annotate":
		// No change of state: see the package comment.
		e.action = aOther
	case "segment_map", "segment_unmap":
		// Expandable segments: pages of one reservation mapped or
		// unmapped, addr and size the pages'.
		e.action = aSegmentMap
		if act == "segment_unmap" {
			e.action = aSegmentUnmap
		}
		if e.size, err = uintField(o, 2, "size", pl); err != nil {
			return val{}, err
		}
		if e.addr, err = uintField(o, 1, "addr", pl); err != nil {
			return val{}, err
		}
	default:
		return val{}, &Error{Where: pl.fieldOf("action").String(), Err: fmt.Errorf("unknown action %q (want alloc, free_requested, free_completed, segment_alloc, segment_free, segment_map, segment_unmap, oom, snapshot or annotate)", act)}
	}
	if wraps(e.addr, e.size) {
		return val{}, errWraps(pl, e.addr, e.size)
	}
	if o.has(3) {
		if e.stream, err = intField(o, 3, "stream", pl); err != nil {
			return val{}, err
		}
	}
	if o.has(4) {
		us, err := intField(o, 4, "time_us", pl)
		if err != nil {
			return val{}, err
		}
		if us > 0 && us < 1<<53 {
			e.t = us * 1000
		}
	}
	sh.ents = append(sh.ents, e)
	return val{k: kEntry, i: int64(len(sh.ents) - 1)}, nil
}

func (sh *shaper) finishBlock(o *obj, pl place) (val, error) {
	b := blockRec{site: siteField(o, 3)}
	var err error
	if b.size, err = uintField(o, 1, "size", pl); err != nil {
		return val{}, err
	}
	if o.has(0) {
		if b.addr, err = uintField(o, 0, "address", pl); err != nil {
			return val{}, err
		}
		b.hasAddr = true
	}
	state, err := strField(o, 2, "state", pl)
	if err != nil {
		return val{}, err
	}
	switch state {
	case "active_allocated", "active_pending_free", "active_awaiting_free":
		b.active = true
	case "inactive":
	default:
		return val{}, &Error{Where: pl.fieldOf("state").String(), Err: fmt.Errorf("unknown block state %q (want active_allocated, active_pending_free or inactive)", state)}
	}
	sh.blocks = append(sh.blocks, b)
	return val{k: kBlock, i: int64(len(sh.blocks) - 1)}, nil
}

func (sh *shaper) finishSegment(o *obj, pl place) error {
	addr, err := uintField(o, 0, "address", pl)
	if err != nil {
		return err
	}
	total, err := uintField(o, 1, "total_size", pl)
	if err != nil {
		return err
	}
	if wraps(addr, total) {
		return errWraps(pl, addr, total)
	}
	expandable := false
	if o.has(4) {
		v := o.field(4)
		if v.k != kBool {
			return &Error{Where: pl.fieldOf("is_expandable").String(), Err: fmt.Errorf("want a bool, got %s", typeName(v))}
		}
		expandable = v.i == 1
	}
	if expandable {
		// One contiguous mapped range of an expandable segment, as
		// PyTorch reports them: it holds what was mapped there.
		if total > 0 {
			sh.mapped = addSpan(sh.mapped, spanOf(addr, total, siteField(o, 3)))
		}
	} else {
		sh.segs[addr] = live{total, siteField(o, 3)}
	}
	sh.stats.LiveSegments++
	if !o.has(2) {
		return nil
	}
	bl := o.field(2).obj()
	var blocks []int32
	if bl.x != nil {
		blocks = bl.x.ints
	}
	// A block's address is its segment's plus the sizes before it, as
	// memory_viz reckons it; newer snapshots also write it.
	at := addr
	for j, idx := range blocks {
		b := sh.blocks[idx]
		if b.hasAddr {
			at = b.addr
		}
		if wraps(at, b.size) {
			return errWraps(place{o: bl, index: j}, at, b.size)
		}
		if b.active {
			sh.live[at] = live{b.size, b.site}
			sh.stats.LiveBlocks++
		}
		at += b.size
	}
	return nil
}
