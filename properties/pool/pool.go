package pool

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/properties/harness"
	"github.com/tlcheck/tlcheck/traces"
)

// The pool property drives the allocators of package impl/gpu, which the
// flat programs do not reach: it hunts the faults of impl.Catalog whose
// Engine is impl.EnginePool. A Program is a list of allocator calls;
// Run runs it, checks the allocator's books against a recount after
// every call, and replays the recorded trace through the model.

// Op is one call of a Program.
type Op struct {
	Kind   string     // malloc, free, record, sync, empty (caching); acquire, release, rerelease (persistent)
	Size   uint64     // malloc: bytes; acquire: elements
	DType  gpu.DType  // acquire
	Device uint8      // acquire: the key's device id
	Stream gpu.Stream // malloc, record, sync
	Index  int        // free, record, release, rerelease: which live (or released) block, modulo their number
}

func (o Op) String() string {
	switch o.Kind {
	case "malloc":
		return fmt.Sprintf("malloc %d s%d", o.Size, o.Stream)
	case "acquire":
		return fmt.Sprintf("acquire %d dtype%d dev%d", o.Size, o.DType, o.Device)
	case "record":
		return fmt.Sprintf("record #%d s%d", o.Index, o.Stream)
	case "sync":
		return fmt.Sprintf("sync s%d", o.Stream)
	case "empty":
		return "empty_cache"
	}
	return fmt.Sprintf("%s #%d", o.Kind, o.Index)
}

// Program is a run of one allocator on a fresh device.
type Program struct {
	Persistent   bool   // the persistent pool, else the caching allocator
	Capacity     uint64 // the device's
	MaxSplitSize uint64 // the caching allocator's max_split_size; 0: unlimited
	Preallocate  uint64 // the persistent pool's PreallocateBytes; 0: none
	Ops          []Op
}

func (p Program) String() string {
	var b strings.Builder
	name := "caching"
	if p.Persistent {
		name = "persistent"
	}
	fmt.Fprintf(&b, "%s, capacity %d, max_split_size %d, preallocate %d\n", name, p.Capacity, p.MaxSplitSize, p.Preallocate)
	for i, o := range p.Ops {
		fmt.Fprintf(&b, "%3d  %s\n", i, o)
	}
	return b.String()
}

// Failure is a broken pool property.
type Failure struct {
	Property string // Model, Fit, Release, Tiling, Merged, Stats, Reserved, Live, NoFalseOOM, OverLimit, EmptyCache, Reuse, Place, Guard, PoolStats, NeverReturns
	Step     int    // the op after which it broke; len(Ops) for the end of the run
	Message  string
	Trace    []traces.Event // what the allocator recorded up to the failure
}

func (f *Failure) Error() string {
	return fmt.Sprintf("pool property %s broken at step %d: %s", f.Property, f.Step, f.Message)
}

// Events is the length of the failure's trace.
func (f *Failure) Events() int { return len(f.Trace) }

// WriteTrace writes the failure's trace as a file `tlcheck replay` reads.
func (f *Failure) WriteTrace(w io.Writer) error { return harness.WriteTrace(w, impl.Header(), f.Trace) }

// The sizes a generated program asks for: around the pools' boundaries.
var (
	poolSizes = []uint64{1, 500, 512, 513, 4096, 100 << 10, 1 << 20, 1<<20 + 1, 2 << 20, 3 << 20, 9 << 20, 10 << 20, 12 << 20, 21 << 20,
		24 << 20, 30 << 20, gpu.MaxRequest}
	poolElems = []uint64{64, 256, 1000, 4096, 1 << 16, 4 << 20}
	// The persistent pool's preallocations: small ones, which the first
	// tensors fill exactly, and larger ones.
	poolPreallocs = []uint64{0, 512, 1024, 2048, 4096, 64 << 10, 1 << 20, 6 << 20}
)

// Generate draws a program of up to 60 calls.
func Generate(rng *rand.Rand, persistent bool) Program {
	p := Program{Persistent: persistent, Capacity: uint64(24+rng.IntN(48)) << 20}
	if !persistent && rng.IntN(3) == 0 {
		p.MaxSplitSize = uint64(20+rng.IntN(13)) << 20 // PyTorch 2.11 takes max_split_size_mb from 20 (reports/cuda.md)
	}
	if persistent {
		p.Preallocate = poolPreallocs[rng.IntN(len(poolPreallocs))]
	}
	n := 1 + rng.IntN(60)
	for range n {
		var o Op
		r := rng.IntN(100)
		if persistent {
			switch {
			case r < 50:
				o = Op{Kind: "acquire", Size: poolElems[rng.IntN(len(poolElems))], DType: gpu.DType(rng.IntN(2) * int(gpu.F16)), Device: uint8(rng.IntN(2))}
			case r < 90:
				o = Op{Kind: "release", Index: rng.IntN(8)}
			default:
				o = Op{Kind: "rerelease", Index: rng.IntN(8)}
			}
		} else {
			s := gpu.Stream(rng.IntN(2))
			switch {
			case r < 45:
				o = Op{Kind: "malloc", Size: poolSizes[rng.IntN(len(poolSizes))], Stream: s}
			case r < 80:
				o = Op{Kind: "free", Index: rng.IntN(8)}
			case r < 88:
				o = Op{Kind: "record", Index: rng.IntN(8), Stream: 1 - s}
			case r < 95:
				o = Op{Kind: "sync", Stream: s}
			default:
				o = Op{Kind: "empty"}
			}
		}
		p.Ops = append(p.Ops, o)
	}
	return p
}

// Run runs p on an allocator with faults on and returns the first
// broken property, or nil.
func Run(p Program, faults []impl.Fault) *Failure {
	var rec impl.Recording
	dev := gpu.NewDevice(p.Capacity, rec.Record)
	var f *Failure
	if p.Persistent {
		f = runPersistent(p, dev, faults, &rec)
	} else {
		f = runCaching(p, dev, faults, &rec)
	}
	if f != nil {
		return f
	}
	f = &Failure{"Model", len(p.Ops), "", rec.Events()}
	if f.Message = f.modelVerdict(); f.Message != "" {
		return f
	}
	return nil
}

// modelVerdict replays the failure's trace through the model and names
// the first violation, or says nothing.
func (f *Failure) modelVerdict() string {
	var rec impl.Recording
	for _, ev := range f.Trace {
		rec.Record(ev)
	}
	rep, err := model.Replay(rec.Source())
	if err != nil {
		return "the trace could not be replayed: " + err.Error()
	}
	if len(rep.Violations) > 0 {
		v := rep.Violations[0]
		return fmt.Sprintf("%s at event %d: %s", v.Kind, v.Event, v.Message)
	}
	return ""
}

type liveBlock struct {
	addr      traces.Addr
	requested uint64
}

func runCaching(p Program, dev *gpu.Device, faults []impl.Fault, rec *impl.Recording) *Failure {
	c, err := gpu.NewCaching(dev, gpu.CachingOptions{MaxSplitSize: p.MaxSplitSize, Faults: faults})
	if err != nil {
		return &Failure{"Setup", 0, err.Error(), nil}
	}
	var live []liveBlock
	fail := func(step int, prop, msg string) *Failure {
		return &Failure{prop, step, msg, slices.Clone(rec.Events())}
	}
	for i, o := range p.Ops {
		switch o.Kind {
		case "malloc":
			before, snap := c.Stats(), c.Snapshot()
			a, err := c.Malloc(o.Size, o.Stream)
			if msg := judgeFit(snap, c.Snapshot(), o.Size, o.Stream, p.MaxSplitSize, a, err); msg != "" {
				return fail(i, "Fit", msg)
			}
			if msg := judgeRelease(snap, c.Snapshot(), c.Stats().NumAllocRetries-before.NumAllocRetries, o.Size, o.Stream, p.MaxSplitSize, p.Capacity, a); msg != "" {
				return fail(i, "Release", msg)
			}
			var oom *gpu.OutOfMemoryError
			switch {
			case errors.As(err, &oom) || o.Size >= gpu.MaxRequest:
				if prop, msg := judgeOOM(c, o.Size, before, err); prop != "" {
					return fail(i, prop, msg)
				}
			case err != nil:
				return fail(i, "Malloc", err.Error())
			default:
				live = append(live, liveBlock{a, o.Size})
			}
		case "free":
			if len(live) == 0 {
				continue
			}
			j := o.Index % len(live)
			if err := c.Free(live[j].addr); err != nil {
				return fail(i, "Free", err.Error())
			}
			live = slices.Delete(live, j, j+1)
		case "record":
			if len(live) == 0 {
				continue
			}
			if err := c.RecordStream(live[o.Index%len(live)].addr, o.Stream); err != nil {
				return fail(i, "RecordStream", err.Error())
			}
		case "sync":
			c.Synchronize(o.Stream)
		case "empty":
			c.EmptyCache()
		}
		if prop, msg := checkCaching(c, live); prop != "" {
			return fail(i, prop, msg)
		}
	}
	for _, b := range live {
		if err := c.Free(b.addr); err != nil {
			return fail(len(p.Ops), "Free", err.Error())
		}
	}
	c.EmptyCache()
	if prop, msg := checkCaching(c, nil); prop != "" {
		return fail(len(p.Ops), prop, msg)
	}
	if n := dev.Used(); n != 0 {
		return fail(len(p.Ops), "EmptyCache", fmt.Sprintf("everything freed and the cache emptied, yet %d bytes stay reserved", n))
	}
	dev.End()
	return nil
}

// judgeOOM says which property an out-of-memory answer err to a malloc of
// size breaks, and how, or nothing: a request of 1 EiB or more must be
// refused so with the allocator's stats as they were before it (before),
// since PyTorch refuses it before its allocator sees it; any other must
// not be a false one (falseOOM).
func judgeOOM(c *gpu.CachingAllocator, size uint64, before gpu.Stats, err error) (string, string) {
	var oom *gpu.OutOfMemoryError
	if size >= gpu.MaxRequest {
		if !errors.As(err, &oom) {
			return "OverLimit", fmt.Sprintf("malloc of %d bytes (1 EiB or more): %v; want out of memory", size, err)
		}
		if st := c.Stats(); st != before {
			return "OverLimit", fmt.Sprintf("malloc of %d bytes (1 EiB or more) changed the stats: %d bytes reserved in %d segments, %d retries, %d OOMs; before it %d in %d, %d, %d",
				size, st.ReservedBytes.All.Current, st.Segment.All.Current, st.NumAllocRetries, st.NumOOMs,
				before.ReservedBytes.All.Current, before.Segment.All.Current, before.NumAllocRetries, before.NumOOMs)
		}
		return "", ""
	}
	if msg := falseOOM(c, size); msg != "" {
		return "NoFalseOOM", msg
	}
	return "", ""
}

// falseOOM says what is wrong with an out-of-memory answer to a request
// of size: PyTorch fails only after returning every segment free as a
// whole, so each segment left must hold a block in use, and the device
// must be unable to hold the segment the request needs.
func falseOOM(c *gpu.CachingAllocator, size uint64) string {
	for _, s := range c.Snapshot() {
		if !slices.ContainsFunc(s.Blocks, func(b gpu.BlockInfo) bool { return b.State != gpu.StateInactive }) {
			return fmt.Sprintf("out of memory for %d bytes while segment %s (%d bytes) holds nothing in use", size, s.Addr, s.Size)
		}
	}
	dev := c.Device()
	if need := gpu.AllocationSize(gpu.RoundSize(size)); dev.Capacity()-dev.Used() >= need {
		return fmt.Sprintf("out of memory for %d bytes while the device has %d bytes free for a %d-byte segment", size, dev.Capacity()-dev.Used(), need)
	}
	return ""
}

// checkCaching recounts the allocator's books from its snapshot and
// returns the first property they break, with a message.
func checkCaching(c *gpu.CachingAllocator, live []liveBlock) (string, string) {
	type tally struct{ alloc, allocB, active, activeB, seg, segB, split, splitB, req int64 }
	var t [2]tally // large, small
	held := map[traces.Addr]uint64{}
	for _, s := range c.Snapshot() {
		k := 0
		if s.Small {
			k = 1
		}
		t[k].seg++
		t[k].segB += int64(s.Size)
		next := s.Addr
		for i, b := range s.Blocks {
			if b.Addr != next {
				return "Tiling", fmt.Sprintf("segment %s: block %d starts at %s, want %s (a gap or an overlap in the block list)", s.Addr, i, b.Addr, next)
			}
			next += traces.Addr(b.Size)
			if i > 0 && b.State == gpu.StateInactive && s.Blocks[i-1].State == gpu.StateInactive {
				return "Merged", fmt.Sprintf("segment %s: free blocks %s and %s are neighbours but were not merged", s.Addr, s.Blocks[i-1].Addr, b.Addr)
			}
			switch b.State {
			case gpu.StateAllocated:
				t[k].alloc++
				t[k].allocB += int64(b.Size)
				held[b.Addr] = b.Requested
				fallthrough
			case gpu.StatePendingFree:
				t[k].active++
				t[k].activeB += int64(b.Size)
				t[k].req += int64(b.Requested)
			default:
				if len(s.Blocks) > 1 {
					t[k].split++
					t[k].splitB += int64(b.Size)
				}
			}
		}
		if end := s.Addr + traces.Addr(s.Size); next != end {
			return "Tiling", fmt.Sprintf("segment %s: its blocks end at %s, the segment at %s (memory no block covers)", s.Addr, next, end)
		}
	}
	st := c.Stats()
	for _, row := range []struct {
		name string
		arr  *gpu.StatArray
		get  func(tally) int64
	}{
		{"allocation", &st.Allocation, func(x tally) int64 { return x.alloc }},
		{"allocated_bytes", &st.AllocatedBytes, func(x tally) int64 { return x.allocB }},
		{"active", &st.Active, func(x tally) int64 { return x.active }},
		{"active_bytes", &st.ActiveBytes, func(x tally) int64 { return x.activeB }},
		{"segment", &st.Segment, func(x tally) int64 { return x.seg }},
		{"reserved_bytes", &st.ReservedBytes, func(x tally) int64 { return x.segB }},
		{"inactive_split", &st.InactiveSplit, func(x tally) int64 { return x.split }},
		{"inactive_split_bytes", &st.InactiveSplitBytes, func(x tally) int64 { return x.splitB }},
		{"requested_bytes", &st.RequestedBytes, func(x tally) int64 { return x.req }},
	} {
		for _, p := range []struct {
			name string
			s    gpu.Stat
			want int64
		}{{"large_pool", row.arr.Large, row.get(t[0])}, {"small_pool", row.arr.Small, row.get(t[1])}, {"all", row.arr.All, row.get(t[0]) + row.get(t[1])}} {
			if p.s.Current != p.want {
				return "Stats", fmt.Sprintf("%s.%s.current is %d, the blocks count %d", row.name, p.name, p.s.Current, p.want)
			}
			if p.s.Allocated-p.s.Freed != p.s.Current || p.s.Peak < p.s.Current {
				return "Stats", fmt.Sprintf("%s.%s: current %d, peak %d, allocated %d, freed %d do not add up", row.name, p.name, p.s.Current, p.s.Peak, p.s.Allocated, p.s.Freed)
			}
		}
	}
	dev := c.Device()
	if got := uint64(st.ReservedBytes.All.Current); got != dev.Used() || int64(dev.Segments()) != st.Segment.All.Current ||
		st.NumDeviceAlloc-st.NumDeviceFree != st.Segment.All.Current {
		return "Reserved", fmt.Sprintf("reserved_bytes %d in %d segments (%d cudaMalloc, %d cudaFree), the device has %d bytes in %d segments",
			got, st.Segment.All.Current, st.NumDeviceAlloc, st.NumDeviceFree, dev.Used(), dev.Segments())
	}
	if live != nil && len(held) != len(live) {
		return "Live", fmt.Sprintf("%d blocks handed out by the books, %d by the calls", len(held), len(live))
	}
	for _, b := range live {
		if req, ok := held[b.addr]; !ok || req != b.requested {
			return "Live", fmt.Sprintf("block %s (%d bytes asked) is not a block in use in any segment", b.addr, b.requested)
		}
	}
	return "", ""
}

// Shrink removes calls from a failing program while it still breaks
// the same property, and returns the smallest program found with its
// failure.
func Shrink(p Program, faults []impl.Fault) (Program, *Failure) {
	f := Run(p, faults)
	if f == nil {
		return p, nil
	}
	p.Ops = p.Ops[:min(len(p.Ops), f.Step+1)]
	for changed := true; changed; {
		changed = false
		for i := len(p.Ops) - 1; i >= 0; i-- {
			q := p
			q.Ops = slices.Delete(slices.Clone(p.Ops), i, i+1)
			if g := Run(q, faults); g != nil && g.Property == f.Property {
				p, f, changed = q, g, true
			}
		}
	}
	return p, f
}
