package fuzz

import (
	"testing"

	"github.com/tlcheck/tlcheck/properties/pool"
)

// FuzzPoolProgram: bytes as a program of allocator calls on impl/gpu
// (pool.Decode: a header of two bytes, then four a call), run on
// the caching allocator or the persistent pool. The property is the pool
// property whole: the books recounted after every call, the block or
// tensor each call returns held to the rules, and a trace the model
// replays clean.
func FuzzPoolProgram(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0})                 // caching: malloc 512 twice, free #0, malloc 1 (the hole)
	f.Add([]byte{48, 7, 0, 14, 0, 0, 0, 14, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 0, 10, 0, 0}) // caching, 48 MiB, max_split 24 MiB: 24 MiB twice, free both, 9 MiB
	f.Add([]byte{0, 0, 0, 16, 0, 0})                                                    // caching: a request of 1 EiB
	f.Add([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0})     // persistent, 512 B preallocated: acquire twice, release both, acquire
	f.Add([]byte{1, 2, 0, 0, 2, 0, 0, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0})                 // persistent: a tensor on device 1, then device 0, a release, a second release
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := pool.RunBytes(data); err != nil {
			t.Fatalf("%v\n%v", err, pool.Decode(data))
		}
	})
}
