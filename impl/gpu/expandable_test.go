package gpu_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
)

// TestExpandableSegments follows a run under expandable_segments:True
// event by event: pages mapped as the large pool grows, a block spanning
// two maps, the free rest of a mapped page reused, and empty_cache
// unmapping only the whole pages of free blocks.
func TestExpandableSegments(t *testing.T) {
	var rec impl.Recording
	d := gpu.NewDevice(1<<30, rec.Record)
	c, err := gpu.NewCaching(d, gpu.CachingOptions{ExpandableSegments: true})
	if err != nil {
		t.Fatal(err)
	}
	base := gpu.Base
	at := func(off uint64) traces.Addr { return base + traces.Addr(off) }
	malloc := func(n uint64, want traces.Addr) traces.Addr {
		t.Helper()
		a, err := c.Malloc(n, 0)
		if err != nil || a != want {
			t.Fatalf("Malloc(%d) = %s, %v; want %s", n, a, err, want)
		}
		return a
	}
	a := malloc(30*MiB, at(0))      // maps two 20 MiB pages
	b := malloc(8*MiB, at(30*MiB))  // the rest of them
	x := malloc(16*MiB, at(38*MiB)) // 2 MiB free and a new page
	if err := c.Free(a); err != nil {
		t.Fatal(err)
	}
	// The best fit weighs what a block could grow into: the 6 MiB block
	// at 54 MiB could take the unmapped rest of the reservation, so the
	// freed 30 MiB block is taken, and split.
	y := malloc(4*MiB, at(0))
	for _, p := range []traces.Addr{b, x} {
		if err := c.Free(p); err != nil {
			t.Fatal(err)
		}
	}
	if st := c.Stats(); st.ReservedBytes.All.Current != 60*MiB || st.AllocatedBytes.All.Current != 4*MiB {
		t.Errorf("reserved %d, allocated %d", st.ReservedBytes.All.Current, st.AllocatedBytes.All.Current)
	}
	// The free block [4 MiB, 60 MiB) holds pages 1 and 2 whole: they go.
	c.EmptyCache()
	if got := c.Snapshot(); len(got) != 1 || got[0].Addr != base || got[0].Size != 20*MiB || !got[0].Expandable || len(got[0].Blocks) != 2 {
		t.Errorf("snapshot after empty_cache: %+v", got)
	}
	if err := c.Free(y); err != nil {
		t.Fatal(err)
	}
	c.EmptyCache() // now page 0 too, and the reservation goes back
	if d.Used() != 0 {
		t.Errorf("%d bytes still mapped", d.Used())
	}
	var got []string
	for _, ev := range rec.Events() {
		switch ev.Op {
		case traces.OpDevMap, traces.OpDevUnmap:
			got = append(got, fmt.Sprintf("%s +%dMiB %dMiB", ev.Op, (ev.Addr-base)>>20, ev.Size>>20))
		case traces.OpDevMalloc:
			t.Errorf("a dev_malloc under expandable segments: %+v", ev)
		}
	}
	want := []string{"dev_map +0MiB 40MiB", "dev_map +40MiB 20MiB", "dev_unmap +20MiB 40MiB", "dev_unmap +0MiB 20MiB"}
	if !slices.Equal(got, want) {
		t.Errorf("maps and unmaps %q, want %q", got, want)
	}
}
