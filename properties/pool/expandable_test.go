package pool

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// runExpandable runs the caching calls of p on an allocator with
// expandable segments and checks its books after every call: the
// snapshot's segments (mapped runs) tile with blocks, free neighbours are
// merged, reserved bytes are the device's mapped bytes and the runs'
// sizes, and every block handed out is in a run. It returns the recorded
// trace, or the first broken book.
func runExpandable(p Program) ([]traces.Event, error) {
	var rec impl.Recording
	dev := gpu.NewDevice(p.Capacity, rec.Record)
	c, err := gpu.NewCaching(dev, gpu.CachingOptions{MaxSplitSize: p.MaxSplitSize, ExpandableSegments: true})
	if err != nil {
		return nil, err
	}
	var live []traces.Addr
	check := func(step int) error {
		var runs, allocated uint64
		held := map[traces.Addr]bool{}
		for _, s := range c.Snapshot() {
			if !s.Expandable {
				return fmt.Errorf("step %d: segment %s is no expandable segment's", step, s.Addr)
			}
			runs += s.Size
			next := s.Addr
			for i, b := range s.Blocks {
				if b.Addr != next {
					return fmt.Errorf("step %d: run %s: block %d at %s, want %s", step, s.Addr, i, b.Addr, next)
				}
				if i > 0 && b.State == gpu.StateInactive && s.Blocks[i-1].State == gpu.StateInactive {
					return fmt.Errorf("step %d: run %s: free neighbours %s and %s not merged", step, s.Addr, s.Blocks[i-1].Addr, b.Addr)
				}
				next += traces.Addr(b.Size)
				if b.State == gpu.StateAllocated {
					held[b.Addr] = true
					allocated += b.Size
				}
			}
			if next != s.Addr+traces.Addr(s.Size) {
				return fmt.Errorf("step %d: run %s: blocks end at %s", step, s.Addr, next)
			}
		}
		st := c.Stats()
		if r := uint64(st.ReservedBytes.All.Current); r != runs || r != dev.Used() {
			return fmt.Errorf("step %d: reserved_bytes %d, the runs %d, the device's mapped bytes %d", step, r, runs, dev.Used())
		}
		if a := uint64(st.AllocatedBytes.All.Current); a != allocated {
			return fmt.Errorf("step %d: allocated_bytes %d, the blocks %d", step, a, allocated)
		}
		for _, a := range live {
			if !held[a] {
				return fmt.Errorf("step %d: block %s handed out is in no run", step, a)
			}
		}
		return nil
	}
	for i, o := range p.Ops {
		switch o.Kind {
		case "malloc":
			a, err := c.Malloc(o.Size, o.Stream)
			if err == nil && a != 0 {
				live = append(live, a)
			}
		case "free":
			if len(live) > 0 {
				j := o.Index % len(live)
				if err := c.Free(live[j]); err != nil {
					return nil, err
				}
				live = slices.Delete(live, j, j+1)
			}
		case "record":
			if len(live) > 0 {
				if err := c.RecordStream(live[o.Index%len(live)], o.Stream); err != nil {
					return nil, err
				}
			}
		case "sync":
			c.Synchronize(o.Stream)
		case "empty":
			c.EmptyCache()
		}
		if err := check(i); err != nil {
			return nil, err
		}
	}
	for _, a := range live {
		if err := c.Free(a); err != nil {
			return nil, err
		}
	}
	c.EmptyCache()
	if n := dev.Used(); n != 0 {
		return nil, fmt.Errorf("everything freed and the cache emptied, yet %d bytes stay mapped", n)
	}
	dev.End()
	return rec.Events(), nil
}

// TestExpandableCachingReplaysClean: generated programs on the caching
// allocator with expandable segments keep its books and record traces
// (dev_map, dev_unmap, pool_get, pool_put) that the model finds clean;
// with a map left out of the trace, the model finds the blocks handed out
// in bytes not mapped.
func TestExpandableCachingReplaysClean(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 60
	}
	maps, unmaps, cut := 0, 0, 0
	for seed := range n {
		p := Generate(rand.New(rand.NewPCG(uint64(seed), 26)), false)
		p.Capacity *= 4 // room for 20 MiB pages
		evs, err := runExpandable(p)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, p)
		}
		var rec impl.Recording
		for _, ev := range evs {
			rec.Record(ev)
			switch ev.Op {
			case traces.OpDevMap:
				maps++
			case traces.OpDevUnmap:
				unmaps++
			case traces.OpDevMalloc:
				t.Fatalf("seed %d: a dev_malloc under expandable segments", seed)
			}
		}
		rep, err := model.Replay(rec.Source())
		if err != nil || len(rep.Violations) > 0 {
			t.Fatalf("seed %d: the model on the trace: %v %+v\n%s", seed, err, rep.Violations, p)
		}
		// The check can fail: without its first map, the trace hands out
		// blocks in bytes not mapped.
		if i := slices.IndexFunc(evs, func(ev traces.Event) bool { return ev.Op == traces.OpDevMap && ev.Addr != 0 }); i >= 0 &&
			slices.ContainsFunc(evs[i:], func(ev traces.Event) bool { return ev.Op == traces.OpPoolGet }) {
			var bad impl.Recording
			for j, ev := range evs {
				if j != i {
					bad.Record(ev)
				}
			}
			if rep, _ := model.Replay(bad.Source()); len(rep.Violations) == 0 {
				t.Fatalf("seed %d: a trace without its first dev_map replays clean", seed)
			}
			cut++
		}
	}
	if maps == 0 || unmaps == 0 || cut == 0 {
		t.Errorf("%d maps, %d unmaps, %d traces cut over %d programs: the programs do not exercise expandable segments", maps, unmaps, cut, n)
	}
}
