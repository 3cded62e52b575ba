package model

import (
	"math/rand/v2"
	"testing"
)

// TestCellTableAgainstMap drives the cell table and a Go map with the same
// random puts and drops (keys clustered, so probe runs collide and wrap)
// and checks that they agree after every step.
func TestCellTableAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var tb cellTable
	tb.init()
	want := map[uint64]int{} // key -> entries
	th := &thing{}
	for step := range 100_000 {
		k := rng.Uint64N(3000)
		if rng.IntN(3) == 0 {
			k = rng.Uint64() // far keys too
		}
		if rng.IntN(2) == 0 {
			c, _ := tb.put(k)
			c.add(entry{lo: k, t: th})
			want[k]++
		} else if c := tb.get(k); c != nil {
			c.remove(th)
			if want[k]--; want[k] == 0 {
				delete(want, k)
				tb.drop(k)
			}
		}
		if tb.used != len(want) {
			t.Fatalf("step %d: table holds %d cells, want %d", step, tb.used, len(want))
		}
		if step%2000 == 0 {
			for k, n := range want {
				if c := tb.get(k); c == nil || c.n != n {
					t.Fatalf("step %d: cell %d is %v, want %d entries", step, k, c, n)
				}
			}
		}
	}
	if len(tb.slots) < minSlots || len(tb.slots) > 8*max(len(want), minSlots) {
		t.Errorf("%d slots for %d cells", len(tb.slots), len(want))
	}
}
