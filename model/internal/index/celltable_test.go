package index

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCellTableAgainstMap drives the cell table and a Go map with the same
// random adds and removes (cells clustered, so probe runs collide and wrap;
// several entries to a cell, as small blocks have) and checks that they
// agree after every step.
func TestCellTableAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const shift = 9
	var tb cellTable
	tb.init(shift, true)
	want := map[uint64][]ref{} // cell -> refs of its entries
	entries := 0
	next := ref(1)
	for step := range 100_000 {
		k := rng.Uint64N(3000)
		if rng.IntN(3) == 0 {
			k = rng.Uint64() >> shift // far cells too
		}
		if rng.IntN(2) == 0 {
			// An entry of a thing starting in cell k-part, seen from cell k.
			part := rng.Uint64N(min(k+1, 5))
			e := entry{lo: (k-part)<<shift + rng.Uint64N(1<<shift), meta: uint64(next) | 1<<metaLen | part<<metaPart}
			if first := tb.add(e); first != (len(want[k]) == 0) {
				t.Fatalf("step %d: add to cell %d says first = %t with %d entries there", step, k, first, len(want[k]))
			}
			want[k] = append(want[k], next)
			next++
			entries++
		} else if refs := want[k]; len(refs) > 0 {
			i := rng.IntN(len(refs))
			rest := tb.remove(k, refs[i])
			want[k] = slices.Delete(refs, i, i+1)
			entries--
			if len(want[k]) == 0 {
				delete(want, k)
			}
			if rest != (len(want[k]) > 0) {
				t.Fatalf("step %d: remove from cell %d says rest = %t, want %t", step, k, rest, len(want[k]) > 0)
			}
		}
		if tb.entries != entries || tb.cells != len(want) {
			t.Fatalf("step %d: table holds %d entries in %d cells, want %d in %d", step, tb.entries, tb.cells, entries, len(want))
		}
		if step%500 == 0 {
			checkLayout(t, &tb, step)
			checkSieve(t, &tb, want, step)
		}
		if step%2000 == 0 {
			for k, refs := range want {
				var got []ref
				it := tb.cell(k)
				for b := it.nextBucket(); b != nil; b = it.nextBucket() {
					for _, e := range b {
						if e.meta != 0 {
							got = append(got, e.ref())
						}
					}
				}
				slices.Sort(got)
				if !slices.Equal(got, slices.Sorted(slices.Values(refs))) {
					t.Fatalf("step %d: cell %d holds %v, want %v", step, k, got, refs)
				}
			}
		}
	}
	if len(tb.buckets) < minBuckets || len(tb.buckets) > 8*max(entries, minBuckets) {
		t.Errorf("%d buckets for %d entries", len(tb.buckets), entries)
	}
}

// checkSieve holds the sieve to the cells: its counts add up to them, and
// no cell with entries is said to be absent.
func checkSieve(t *testing.T, tb *cellTable, want map[uint64][]ref, step int) {
	t.Helper()
	n := 0
	if tb.sieve != nil {
		for _, c := range tb.sieve {
			n += int(c)
		}
	}
	if n != tb.cells {
		t.Fatalf("step %d: the sieve counts %d cells, the table holds %d", step, n, tb.cells)
	}
	for k := range want {
		if tb.absent(k) {
			t.Fatalf("step %d: cell %d has entries but is said to be absent", step, k)
		}
	}
}

// checkLayout holds the table to the layout its walks rely on: each cell's
// buckets, found by walking past any with room, are all full but the last.
func checkLayout(t *testing.T, tb *cellTable, step int) {
	t.Helper()
	for i := range tb.buckets {
		if tb.buckets[i][0].meta == 0 {
			continue
		}
		k := tb.cellOf(&tb.buckets[i][0])
		it := tb.cell(k)
		var room []bool
		for {
			it.done = false // walk every bucket of the cell, not only up to the first with room
			b := it.nextBucket()
			if b == nil {
				break
			}
			room = append(room, b[bucketLen-1].meta == 0)
		}
		for j, r := range room[:len(room)-1] {
			if r {
				t.Fatalf("step %d: bucket %d of the %d of cell %d has room", step, j, len(room), k)
			}
		}
	}
}
