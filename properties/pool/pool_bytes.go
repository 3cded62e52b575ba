package pool

import (
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
)

// poolOpOf reads one call from four bytes, weighted as Generate
// weights them: the kind, the size (caching) or elements (persistent),
// the stream (caching) or the dtype and device (persistent), the index.
func poolOpOf(persistent bool, b [4]byte) Op {
	if persistent {
		kinds := []string{"acquire", "acquire", "release", "release", "rerelease"}
		return Op{Kind: kinds[int(b[0])%len(kinds)], Size: poolElems[int(b[1])%len(poolElems)],
			DType: gpu.DType(int(b[2]%2) * int(gpu.F16)), Device: (b[2] >> 1) % 2, Index: int(b[3] % 8)}
	}
	kinds := []string{"malloc", "malloc", "malloc", "free", "free", "record", "sync", "empty"}
	return Op{Kind: kinds[int(b[0])%len(kinds)], Size: poolSizes[int(b[1])%len(poolSizes)],
		Stream: gpu.Stream(b[2] % 2), Index: int(b[3] % 8)}
}

// Decode reads a Program from any bytes, as FuzzPoolProgram feeds
// it. The first byte picks the allocator (its low bit: the persistent
// pool) and the capacity (24 MiB and up to 48 more, from the other bits);
// the second the caching allocator's max_split_size (an even byte: unset;
// else 21 to 32 MiB) or the persistent pool's preallocation (one of
// poolPreallocs); then each four bytes are one call (poolOpOf), up to 100.
// Missing header bytes count as 0.
func Decode(data []byte) Program {
	var head [2]byte
	data = data[copy(head[:], data):]
	p := Program{Persistent: head[0]&1 == 1, Capacity: uint64(24+int(head[0]>>1)%49) << 20}
	switch {
	case p.Persistent:
		p.Preallocate = poolPreallocs[int(head[1])%len(poolPreallocs)]
	case head[1]&1 == 1:
		p.MaxSplitSize = uint64(21+int(head[1]>>1)%12) << 20
	}
	for ; len(data) >= 4 && len(p.Ops) < 100; data = data[4:] {
		p.Ops = append(p.Ops, poolOpOf(p.Persistent, [4]byte(data[:4])))
	}
	return p
}

// RunBytes runs Decode(data) with faults on (none: the correct
// allocators) and returns its first broken pool property, or nil:
// FuzzPoolProgram's property.
func RunBytes(data []byte, faults ...impl.Fault) error {
	if f := Run(Decode(data), faults); f != nil {
		return f
	}
	return nil
}
