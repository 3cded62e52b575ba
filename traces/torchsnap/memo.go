package torchsnap

import "unsafe"

// memo is the pickle's memo: values by index. Python's pickler numbers
// them 0, 1, 2, ..., so they are kept in chunks of a slice (which, unlike
// one slice, never holds twice the room it needs while it grows), and an
// index far beyond the others in a map.
type memo struct {
	chunks [][memoChunk]slot
	far    map[uint32]val
	n      int // entries set: MEMOIZE's next index
}

const memoChunk = 1 << 12

// slot is a val in 16 bytes rather than 24, since the memo holds one for
// every container and string of the pickle: the kind goes in the top
// byte of x, and a payload that does not fit in the rest (an integer, a
// float) in a box that p points to. Python's pickler memoizes no numbers.
type slot struct {
	p unsafe.Pointer
	x uint64
}

const (
	slotKind  = 56
	slotBoxed = 1 << 55
	slotMask  = slotBoxed - 1
)

// unset marks a slot of a chunk that no entry has been stored in.
var unset = slot{x: 0xff << slotKind}

func pack(v val) slot {
	if v.p == nil && (v.i < 0 || v.i > slotMask) {
		i := v.i
		return slot{p: unsafe.Pointer(&i), x: uint64(v.k)<<slotKind | slotBoxed}
	}
	return slot{p: v.p, x: uint64(v.k)<<slotKind | uint64(v.i)}
}

func (s slot) unpack() val {
	k := kind(s.x >> slotKind)
	if s.x&slotBoxed != 0 {
		return val{k: k, i: *(*int64)(s.p)}
	}
	return val{k: k, i: int64(s.x & slotMask), p: s.p}
}

func (mo *memo) slot(idx uint32, grow bool) *slot {
	c := int(idx / memoChunk)
	if c >= len(mo.chunks) {
		// An index within a chunk or two of the others grows the chunks;
		// one beyond goes to the map.
		if !grow || c > len(mo.chunks)+1 {
			return nil
		}
		for c >= len(mo.chunks) {
			mo.chunks = append(mo.chunks, [memoChunk]slot{})
			ch := &mo.chunks[len(mo.chunks)-1]
			for i := range ch {
				ch[i] = unset
			}
		}
	}
	return &mo.chunks[c][idx%memoChunk]
}

// memoPut stores v at memo index idx.
func (m *machine) memoPut(idx uint32, v val) error {
	mo := &m.memo
	if p := mo.slot(idx, true); p != nil {
		if *p == unset {
			if _, ok := mo.far[idx]; ok {
				delete(mo.far, idx) // now within the chunks
			} else {
				mo.n++
			}
		}
		*p = pack(v)
	} else {
		if mo.far == nil {
			mo.far = make(map[uint32]val)
		}
		if _, ok := mo.far[idx]; !ok {
			mo.n++
		}
		mo.far[idx] = v
	}
	if mo.n > memoSlack+int(m.off/memoPerByte) {
		return m.fail("%d values memoized in the pickle's first %d bytes: more values memoized than a snapshot of that size holds (%d, one for every %d bytes beyond %d): PyTorch never writes such a pickle",
			mo.n, m.off, memoSlack+int(m.off/memoPerByte), memoPerByte, memoSlack)
	}
	if v.k == kObj && v.obj().memo == 0 {
		v.obj().memo = int64(idx) + 1
	}
	return nil
}

// memoGet fetches memo index idx.
func (m *machine) memoGet(idx uint32) (val, error) {
	if p := m.memo.slot(idx, false); p != nil && *p != unset {
		return p.unpack(), nil
	}
	if v, ok := m.memo.far[idx]; ok {
		return v, nil
	}
	return val{}, m.fail("malformed pickle: memo entry %d was never stored", idx)
}

// reseal replaces o's memo entry, once o is read, by what was read of it,
// so that the memo stops holding o.
func (m *machine) reseal(o *obj, v val) {
	if o.memo == 0 {
		return
	}
	idx := uint32(o.memo - 1)
	if p := m.memo.slot(idx, false); p != nil && p.p == unsafe.Pointer(o) && *p != unset {
		*p = pack(v)
	} else if old, ok := m.memo.far[idx]; ok && old.p == unsafe.Pointer(o) {
		m.memo.far[idx] = v
	}
}
