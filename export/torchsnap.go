package export

import (
	"cmp"
	"io"
	"slices"

	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// torchSnapExport writes a trace's device layer as a PyTorch memory
// snapshot for pytorch.org/memory_viz: segments', mapped ranges' and pool
// blocks' lives as trace entries, as they begin and end, and the segments
// live at the end with their blocks. It is fed by the model's hooks, so
// what it writes is what the model holds happened: a free of what was
// never live, which the model reports, has no entry (memory_viz could not
// draw it). A freed block gets free_requested and free_completed, as
// PyTorch writes them; every entry's frames are the site that made the
// thing, escaped (safetext): Python refuses a pickle whose strings are not
// UTF-8.
//
// A dev_unmap may cut a mapped range: the model then tells of the range's
// death and of what is left of it born at the same event. The export
// writes what the event unmapped, the ranges that died less those born
// again, as segment_unmap entries, adjacent pieces as one, as PyTorch
// writes them; mapped ranges live at the end are written as expandable
// segments, one for each contiguous run, as PyTorch reports them.
type torchSnapExport struct {
	w   *torchsnap.Writer
	err error // the first write that failed; born and died cannot return it

	// The mapped bytes that died at unmapAt and are not yet written.
	unmapped []torchsnap.Entry
	unmapAt  stamp
}

func newTorchSnap(w io.Writer) *torchSnapExport {
	return &torchSnapExport{w: torchsnap.NewWriter(w)}
}

func (x *torchSnapExport) write(action string, l *model.Thing, at stamp) {
	if x.err != nil {
		return
	}
	e := torchsnap.Entry{Action: action, Addr: uint64(l.Addr), Size: l.Size, Site: safetext.Escape(l.Site)}
	if at.hasT {
		e.TimeUS = at.t / 1000
	}
	x.err = x.w.Write(e)
}

func (x *torchSnapExport) begin(traces.Header) error { return nil }

func (x *torchSnapExport) born(l *model.Thing, at stamp) {
	x.settle(at)
	switch l.Kind {
	case model.Segment:
		x.write(torchsnap.ActionSegmentAlloc, l, at)
	case model.Mapping:
		if len(x.unmapped) > 0 {
			x.keep(uint64(l.Addr), uint64(l.Addr)+l.Size) // what an unmap left of a range it cut
			return
		}
		x.write(torchsnap.ActionSegmentMap, l, at)
	case model.PoolBlock:
		x.write(torchsnap.ActionAlloc, l, at)
	}
}

func (x *torchSnapExport) died(l *model.Thing, at stamp) {
	x.settle(at)
	switch l.Kind {
	case model.Segment:
		x.write(torchsnap.ActionSegmentFree, l, at)
	case model.Mapping:
		x.unmapAt = at
		x.unmapped = append(x.unmapped, torchsnap.Entry{Action: torchsnap.ActionSegmentUnmap, Addr: uint64(l.Addr), Size: l.Size, Site: safetext.Escape(l.Site)})
	case model.PoolBlock:
		x.write(torchsnap.ActionFreeRequested, l, at)
		x.write(torchsnap.ActionFreeCompleted, l, at)
	}
}

// keep takes the bytes [lo, hi), born again, out of the unmapped ones.
func (x *torchSnapExport) keep(lo, hi uint64) {
	var out []torchsnap.Entry
	for _, e := range x.unmapped {
		end := e.Addr + e.Size
		if end <= lo || e.Addr >= hi {
			out = append(out, e)
			continue
		}
		if e.Addr < lo {
			out = append(out, torchsnap.Entry{Action: e.Action, Addr: e.Addr, Size: lo - e.Addr, Site: e.Site})
		}
		if end > hi {
			out = append(out, torchsnap.Entry{Action: e.Action, Addr: hi, Size: end - hi, Site: e.Site})
		}
	}
	x.unmapped = out
}

// settle writes the unmapped bytes of an earlier event than at, by
// address, adjacent pieces as one entry.
func (x *torchSnapExport) settle(at stamp) {
	if len(x.unmapped) == 0 || at.event == x.unmapAt.event || x.err != nil {
		return
	}
	es := x.unmapped
	x.unmapped = nil
	slices.SortFunc(es, func(a, b torchsnap.Entry) int { return cmp.Compare(a.Addr, b.Addr) })
	for i := 0; i < len(es); i++ {
		e := es[i]
		for i+1 < len(es) && es[i+1].Addr == e.Addr+e.Size {
			i++
			e.Size += es[i].Size
		}
		if x.unmapAt.hasT {
			e.TimeUS = x.unmapAt.t / 1000
		}
		if x.err = x.w.Write(e); x.err != nil {
			return
		}
	}
}

func (x *torchSnapExport) counter(stamp, traces.Space, uint64)              {}
func (x *torchSnapExport) violation(*traces.Violation, stamp, bool, uint64) {}
func (x *torchSnapExport) unleaked(*model.Thing)                            {}

// finish writes the segments live at the end, each with the live pool
// blocks that lie in it, and each run of mapped ranges, one after
// another, as an expandable segment with the pool blocks that start in it.
func (x *torchSnapExport) finish(_ *Summary, live []model.Thing, last stamp) error {
	x.settle(stamp{event: last.event + 1})
	if x.err != nil {
		return x.err
	}
	var segs []torchsnap.Segment
	index := make(map[int]int) // a segment's number -> its index in segs
	var runs []torchsnap.Segment
	for _, l := range live {
		switch l.Kind {
		case model.Segment:
			index[l.ID] = len(segs)
			segs = append(segs, torchsnap.Segment{Addr: uint64(l.Addr), Size: l.Size, Site: safetext.Escape(l.Site)})
		case model.Mapping:
			runs = append(runs, torchsnap.Segment{Addr: uint64(l.Addr), Size: l.Size, Site: safetext.Escape(l.Site), Expandable: true})
		}
	}
	runs = joinRuns(runs)
	for _, l := range live {
		if l.Kind != model.PoolBlock {
			continue
		}
		b := torchsnap.Block{Addr: uint64(l.Addr), Size: l.Size, Site: safetext.Escape(l.Site)}
		if i, ok := index[l.Segment]; ok && l.Segment != 0 {
			segs[i].Blocks = append(segs[i].Blocks, b)
		} else if i, ok := runAt(runs, b.Addr); ok {
			runs[i].Blocks = append(runs[i].Blocks, b)
		}
	}
	return x.w.Close(append(segs, runs...))
}

// joinRuns sorts mapped ranges and joins those that follow one another.
func joinRuns(rs []torchsnap.Segment) []torchsnap.Segment {
	slices.SortFunc(rs, func(a, b torchsnap.Segment) int { return cmp.Compare(a.Addr, b.Addr) })
	var out []torchsnap.Segment
	for _, r := range rs {
		if n := len(out); n > 0 && out[n-1].Addr+out[n-1].Size == r.Addr {
			out[n-1].Size += r.Size
			continue
		}
		out = append(out, r)
	}
	return out
}

// runAt returns the index of the run (by address, disjoint) holding a.
func runAt(rs []torchsnap.Segment, a uint64) (int, bool) {
	i, _ := slices.BinarySearchFunc(rs, a, func(r torchsnap.Segment, a uint64) int { return cmp.Compare(r.Addr, a+1) })
	if i == 0 || a >= rs[i-1].Addr+rs[i-1].Size {
		return 0, false
	}
	return i - 1, true
}
