package impl

import (
	"fmt"
	"math/bits"

	"github.com/tlcheck/tlcheck/traces"
)

// The simulated address space. Size classes are powers of two from 16
// bytes; class k holds blocks of 16<<k bytes and owns the address range
// [1<<(k+28), 1<<(k+29)), so every class has room for 1<<24 blocks, a
// block's class is the bit length of its address, and its index is a
// shift away. Lookup is arithmetic: no map, no search, no allocation.
const (
	alignShift  = 4                // blocks are 16-byte aligned
	regionShift = 28               // class 0 starts at 0x10000000
	numClasses  = 64 - regionShift // classes 0..35
	maxBlocks   = 1 << (regionShift - alignShift)
	heapBase    = traces.Addr(1) << regionShift
)

// MaxSize is the largest size the simulated heap hands out (512 GiB).
const MaxSize = uint64(1) << (numClasses - 1 + alignShift)

// ZSTAddr is the dangling address the zst-allocates fault gives
// zero-sized values: aligned, non-NULL, and outside the heap.
const ZSTAddr = traces.Addr(1) << alignShift

// DefaultQuarantine is how many freed blocks of a size class ReuseFIFO
// holds back before it reuses the oldest, when Config.Quarantine is 0.
const DefaultQuarantine = 4

// block is one block of the heap and the header of the object in it: a
// runtime that keeps its books by address keeps them in the block.
type block struct {
	gen      uint32 // handouts of this block so far; names the current object
	live     bool   // handed out and not freed since
	isStruct bool
	records  int32 // scope records naming this address, of any generation
	count    int   // reference count
	fields   []ref // a struct's fields, as acquired at struct_init
}

// ref names one object: an address and the generation of the block at
// that address when the reference was made. A ref whose generation is not
// the block's current one names an earlier object, now dead.
type ref struct {
	addr traces.Addr
	gen  uint32
}

// sizeClass is the books of one size class: a header per block ever
// handed out, and the freed blocks waiting for reuse.
type sizeClass struct {
	blocks []block
	free   []uint32 // freed block indices; LIFO pops the end, FIFO takes from head
	head   int      // FIFO: free[head] is the oldest freed block
}

// heap is the simulated allocator. It is deterministic: the same calls
// give the same addresses.
type heap struct {
	classes    []sizeClass // up to the largest class handed out so far: a runtime is made per program, most use three
	fifo       bool
	quarantine int
	twice      bool  // heap-double-handout: a freed block is queued twice
	zst        block // the zst-allocates fault's object at ZSTAddr
	zstOn      bool
}

func newHeap(reuse Reuse, quarantine int) heap {
	if quarantine <= 0 {
		quarantine = DefaultQuarantine
	}
	return heap{fifo: reuse == ReuseFIFO, quarantine: quarantine}
}

// classOf returns the size class that serves size bytes.
func classOf(size uint64) int {
	if size <= 1<<alignShift {
		return 0
	}
	return bits.Len64(size-1) - alignShift
}

func blockAddr(k int, i uint32) traces.Addr {
	return heapBase<<k + traces.Addr(i)<<(k+alignShift)
}

// malloc hands out a block for size bytes (size > 0): a freed one of the
// class when the reuse policy allows, else a fresh one. The block's
// generation is advanced: it now names a new object.
func (h *heap) malloc(size uint64) (traces.Addr, *block, error) {
	if size > MaxSize {
		return 0, nil, fmt.Errorf("alloc %d bytes: larger than %d: %w", size, MaxSize, ErrOutOfMemory)
	}
	k := classOf(size)
	if k >= len(h.classes) {
		h.classes = append(h.classes, make([]sizeClass, k+1-len(h.classes))...)
	}
	c := &h.classes[k]
	var i uint32
	switch {
	case !h.fifo && len(c.free) > 0:
		i = c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
	case h.fifo && len(c.free)-c.head > h.quarantine:
		i = c.free[c.head]
		c.head++
		if c.head*2 >= len(c.free) { // compact, so the queue does not creep
			c.free = c.free[:copy(c.free, c.free[c.head:])]
			c.head = 0
		}
	default:
		if len(c.blocks) == maxBlocks {
			return 0, nil, fmt.Errorf("alloc %d bytes: all %d blocks of %d bytes in use: %w",
				size, maxBlocks, uint64(1)<<(k+alignShift), ErrOutOfMemory)
		}
		c.blocks = append(c.blocks, block{})
		i = uint32(len(c.blocks) - 1)
	}
	b := &c.blocks[i]
	b.gen++
	b.live = true
	return blockAddr(k, i), b, nil
}

// lookup returns the header of the block at a, or nil if a is not the
// start of a block the heap ever handed out.
func (h *heap) lookup(a traces.Addr) *block {
	if a < heapBase {
		if a == ZSTAddr && h.zstOn {
			return &h.zst
		}
		return nil
	}
	k := bits.Len64(uint64(a)) - regionShift - 1
	off := a - heapBase<<k
	shift := k + alignShift
	if off&(1<<shift-1) != 0 || k >= len(h.classes) {
		return nil
	}
	c := &h.classes[k]
	i := uint64(off >> shift)
	if i >= uint64(len(c.blocks)) {
		return nil
	}
	return &c.blocks[i]
}

// free returns the block at a to its class. Freeing a block that is not
// live changes nothing: the heap keeps its free lists sound even when a
// faulty runtime frees twice.
func (h *heap) free(a traces.Addr, b *block) {
	if !b.live {
		return
	}
	b.live = false
	if b == &h.zst {
		return
	}
	k := bits.Len64(uint64(a)) - regionShift - 1
	i := uint32((a - heapBase<<k) >> (k + alignShift))
	c := &h.classes[k]
	c.free = append(c.free, i)
	if h.twice {
		c.free = append(c.free, i)
	}
}

// each calls fn for every live block, in address order.
func (h *heap) each(fn func(traces.Addr, *block)) {
	if h.zstOn && h.zst.live {
		fn(ZSTAddr, &h.zst)
	}
	for k := range h.classes {
		c := &h.classes[k]
		for i := range c.blocks {
			if b := &c.blocks[i]; b.live {
				fn(blockAddr(k, uint32(i)), b)
			}
		}
	}
}
