package gpu_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
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

// TestExpandableAgreesWithSnapshot replays the allocations and frees of
// traces/torchsnap/testdata/expandable.pickle (a training loop under
// expandable segments, written by make_expandable_snapshot.py, which
// follows PyTorch's rules) on a CachingAllocator with
// ExpandableSegments, its reservations placed where the snapshot's are:
// every block lands at the snapshot's address, and every map and unmap
// is the snapshot's, an empty_cache before each run of unmaps.
func TestExpandableAgreesWithSnapshot(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "traces", "torchsnap", "testdata", "expandable.pickle"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := torchsnap.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var want []traces.Event
	for {
		var ev traces.Event
		if err := r.Next(&ev); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		want = append(want, ev)
	}
	const capacity = 1 << 30 // reservations of 1152 MiB (small pool) and 1160 MiB (large)
	var rec impl.Recording
	d := gpu.NewDevice(capacity, rec.Record)
	d.PlaceWith(func(size uint64) traces.Addr {
		if size%gpu.LargeBuffer == 0 {
			return 0x7F3C00000000 // the script's large pool
		}
		return 0x7F3A00000000
	})
	c, err := gpu.NewCaching(d, gpu.CachingOptions{ExpandableSegments: true})
	if err != nil {
		t.Fatal(err)
	}
	var wantMaps []string
	unmapping := false
	for i, ev := range want {
		switch ev.Op {
		case traces.OpPoolGet:
			a, err := c.Malloc(ev.Size, 0)
			if err != nil || a != ev.Addr {
				t.Fatalf("event %d: Malloc(%d) = %s, %v; the snapshot has %s", i, ev.Size, a, err, ev.Addr)
			}
		case traces.OpPoolPut:
			if err := c.Free(ev.Addr); err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		case traces.OpDevUnmap:
			if !unmapping {
				c.EmptyCache()
			}
		}
		unmapping = ev.Op == traces.OpDevUnmap
		if ev.Op == traces.OpDevMap || ev.Op == traces.OpDevUnmap {
			wantMaps = append(wantMaps, fmt.Sprintf("%s %s %d", ev.Op, ev.Addr, ev.Size))
		}
	}
	var got []string
	for _, ev := range rec.Events() {
		if ev.Op == traces.OpDevMap || ev.Op == traces.OpDevUnmap {
			got = append(got, fmt.Sprintf("%s %s %d", ev.Op, ev.Addr, ev.Size))
		}
	}
	// The prelude's maps are by address, the allocator's as the weights
	// were made: compare those as sets, the rest in order.
	n := r.Stats().Prelude
	preludeMaps := 0
	for _, ev := range want[:n] {
		if ev.Op == traces.OpDevMap {
			preludeMaps++
		}
	}
	if len(got) < preludeMaps {
		t.Fatalf("maps and unmaps %q, want %q", got, wantMaps)
	}
	slices.Sort(got[:preludeMaps])
	slices.Sort(wantMaps[:preludeMaps])
	if !slices.Equal(got, wantMaps) {
		t.Errorf("maps and unmaps\n%q\nwant\n%q", got, wantMaps)
	}
}
