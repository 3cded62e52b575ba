package index

import (
	"math/rand/v2"
	"testing"
)

// TestBucketScans holds the written-out scans of a bucket to the plain
// loops they stand for, on random buckets packed from the front whose
// entries often share a start (as when things nest) or start at 0.
func TestBucketScans(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20_000 {
		var b bucket
		n := rng.IntN(bucketLen + 1)
		for j := range n {
			b[j] = entry{lo: uint64(rng.IntN(6)) * 16, meta: uint64(rng.IntN(5)+1) | uint64(rng.IntN(40))<<metaLen}
		}
		a := uint64(rng.IntN(6)) * 16
		lo := uint64(rng.IntN(5))*16 + 1
		hi := lo + uint64(rng.IntN(4))*16
		r := ref(rng.IntN(6))

		if got := b.used(); got != n {
			t.Fatalf("%v: used = %d, want %d", b, got, n)
		}
		var wantAt *entry
		for j := range b {
			if b[j].lo == a && b[j].meta != 0 {
				wantAt = &b[j]
				break
			}
		}
		if got := b.startingAt(a); got != wantAt {
			t.Fatalf("%v: startingAt(%#x) = %v, want %v", b, a, got, wantAt)
		}
		wantIn := false
		for j := range b {
			wantIn = wantIn || lo <= b[j].lo && b[j].lo < hi && b[j].meta != 0
		}
		if got := b.startsIn(lo, hi); got != wantIn {
			t.Fatalf("%v: startsIn(%#x, %#x) = %t, want %t", b, lo, hi, got, wantIn)
		}
		var wantHold *entry
		for j := range b {
			if e := &b[j]; e.lo <= a+8 && a+8 < e.hi() && e.meta != 0 {
				wantHold = e
				break
			}
		}
		if got := b.holding(a + 8); got != wantHold {
			t.Fatalf("%v: holding(%#x) = %v, want %v", b, a+8, got, wantHold)
		}
		var wantRef *entry
		for j := range b {
			if b[j].ref() == r && b[j].meta != 0 {
				wantRef = &b[j]
				break
			}
		}
		if got := b.withRef(r); got != wantRef && r != 0 {
			t.Fatalf("%v: withRef(%d) = %v, want %v", b, r, got, wantRef)
		}
	}
}
