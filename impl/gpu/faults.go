package gpu

import (
	"fmt"

	"github.com/tlcheck/tlcheck/impl"
)

// faults are the pool faults of impl.Catalog switched on for an allocator.
// Faults of other engines are accepted and change nothing here.
type faults struct {
	duplicateEntry  bool // persistent pool: a pointer put back twice is queued twice
	keyNeverMatches bool // persistent pool: the lookup key never equals the stored one
	lostRemainder   bool // caching: a split's remainder is dropped
	noMerge         bool // caching: a freed block is not merged with its neighbours
	statsDrift      bool // caching: a free takes the requested size off allocated_bytes
	reuseOldest     bool // persistent pool: acquire takes the oldest released tensor of a key
	preallocExact   bool // persistent pool: a tensor exactly filling the preallocation's rest is not carved
	worstFit        bool // caching: get_free_block takes the largest fitting block
	releaseWhole    bool // caching: with max_split_size, malloc frees the whole cache at once
}

func parseFaults(fs []impl.Fault) (faults, error) {
	var f faults
	for _, name := range fs {
		if _, ok := impl.LookupFault(string(name)); !ok {
			return f, fmt.Errorf("gpu: unknown fault %q (see impl.Catalog)", name)
		}
		switch name {
		case FaultPoolDuplicateFreeEntry:
			f.duplicateEntry = true
		case FaultPoolKeyNeverMatches:
			f.keyNeverMatches = true
		case FaultPoolSplitRemainderLost:
			f.lostRemainder = true
		case FaultPoolFreeNoMerge:
			f.noMerge = true
		case FaultPoolStatsDrift:
			f.statsDrift = true
		case FaultPoolReuseOldest:
			f.reuseOldest = true
		case FaultPoolPreallocExactFit:
			f.preallocExact = true
		case FaultPoolWorstFit:
			f.worstFit = true
		case FaultPoolReleaseWholeCache:
			f.releaseWhole = true
		}
	}
	return f, nil
}
