package snapgen

import (
	"errors"

	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
)

// gen runs a loop on the allocator and records what it does as PyTorch's
// trace entries.
type gen struct {
	cfg  Config
	snap *Snapshot
	ca   *gpu.CachingAllocator

	cur       []Frame // the stack of the call being made
	pending   uint64  // the requested size of the malloc being made
	all       []Entry // every entry, recording or not
	recStart  int     // the index in all where recording began
	iterStart []int   // the index in all of each step's first entry
	t         int64   // µs

	requested   map[traces.Addr]uint64 // live blocks' requested sizes
	segSize     map[traces.Addr]uint64 // live segments' sizes
	blockFrames map[traces.Addr][]Frame
	segFrames   map[traces.Addr][]Frame

	annots []Annotation
	rng    uint64
	err    error // the first free the allocator refused: a bug of the loop
	// oom is set once a malloc failed: the snapshot is taken there, as an
	// out-of-memory observer takes it, and nothing after is recorded.
	oom bool
}

// record hears of each device and allocator event, as a _record_memory_history
// hook would.
func (g *gen) record(ev traces.Event) {
	if g.oom {
		return
	}
	e := Entry{Addr: uint64(ev.Addr), Frames: g.cur}
	switch ev.Op {
	case traces.OpDevMalloc:
		if ev.Addr == 0 { // a failed cudaMalloc: PyTorch records none
			return
		}
		e.Action, e.Size = "segment_alloc", ev.Size
		g.segSize[ev.Addr], g.segFrames[ev.Addr] = ev.Size, g.cur
	case traces.OpDevFree:
		e.Action, e.Size = "segment_free", g.segSize[ev.Addr]
		delete(g.segSize, ev.Addr)
		delete(g.segFrames, ev.Addr)
	case traces.OpPoolGet:
		e.Action, e.Size = "alloc", g.pending
		g.requested[ev.Addr], g.blockFrames[ev.Addr] = g.pending, g.cur
	case traces.OpPoolPut:
		e.Action, e.Size = "free_requested", g.requested[ev.Addr]
		g.add(e)
		e.Action = "free_completed"
		delete(g.requested, ev.Addr)
		delete(g.blockFrames, ev.Addr)
	default:
		return
	}
	g.add(e)
}

func (g *gen) add(e Entry) {
	g.t += 3 + int64(len(g.all)%5)
	e.TimeUS = 1_700_000_000_000_000 + g.t
	g.all = append(g.all, e)
}

// annotate records an external annotation now, as torch.optim's
// optimizers do around step and zero_grad.
func (g *gen) annotate(stage, name string) {
	if !g.oom {
		g.annots = append(g.annots, Annotation{stage, name, 1_700_000_000_000_000 + g.t + 1})
	}
}

// malloc is a tensor made at the stack fs; an out-of-memory error is
// recorded as PyTorch records it and returned.
func (g *gen) malloc(size uint64, fs []Frame) (traces.Addr, error) {
	g.cur, g.pending = fs, size
	a, err := g.ca.Malloc(size, 0)
	var oom *gpu.OutOfMemoryError
	if errors.As(err, &oom) {
		dev := g.ca.Device()
		g.add(Entry{Action: "oom", Addr: dev.Capacity() - dev.Used(), Size: gpu.RoundSize(size), Frames: fs})
		g.oom = true
	}
	return a, err
}

// free drops a tensor at the stack fs; 0 is no tensor.
func (g *gen) free(a traces.Addr, fs []Frame) {
	if a == 0 || g.oom {
		return
	}
	g.cur = fs
	if err := g.ca.Free(a); err != nil && g.err == nil {
		g.err = err
	}
}

// rows is a step's batch rows.
func (g *gen) rows() uint64 {
	b := uint64(g.cfg.Batch)
	if g.cfg.Seed == 0 {
		return b
	}
	g.rng ^= g.rng << 13 // xorshift64
	g.rng ^= g.rng >> 7
	g.rng ^= g.rng << 17
	lo := b / 2
	if g.cfg.Spread > 1 {
		lo = max(b/uint64(g.cfg.Spread), 1)
	}
	return lo + g.rng%(b-lo+1)
}

// finish cuts the entries to what was recorded and takes the segments.
func (g *gen) finish() {
	start := g.recStart
	if m := g.cfg.MaxEntries; m > 0 && len(g.all)-start > m {
		start = len(g.all) - m
	}
	g.snap.Entries = g.all[start:]
	for _, a := range g.annots {
		if len(g.snap.Entries) > 0 && a.TimeUS >= g.snap.Entries[0].TimeUS {
			g.snap.Annotations = append(g.snap.Annotations, a)
		}
	}
	for _, i := range g.iterStart {
		if i >= start {
			g.snap.Iterations = append(g.snap.Iterations, i-start)
		}
	}
	for _, s := range g.ca.Snapshot() {
		seg := Segment{SegmentInfo: s, Frames: g.segFrames[s.Addr]}
		for _, b := range s.Blocks {
			var fs []Frame
			if b.State != gpu.StateInactive {
				fs = g.blockFrames[b.Addr]
			}
			seg.BlockFrames = append(seg.BlockFrames, fs)
		}
		g.snap.Segments = append(g.snap.Segments, seg)
	}
}
