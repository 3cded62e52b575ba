package main

import (
	"io"

	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// torchSnapExport writes a trace's device layer as a PyTorch memory
// snapshot for pytorch.org/memory_viz: segments' and pool blocks' lives
// as trace entries, as they begin and end, and the segments live at the
// end with their blocks. It draws on the lives tracker, so what it writes
// is what the model holds happened: a free of what was never live, which
// the model reports, has no entry (memory_viz could not draw it). A freed
// block gets free_requested and free_completed, as PyTorch writes them;
// every entry's frames are the site that made the thing.
type torchSnapExport struct {
	w   *torchsnap.Writer
	err error // the first write that failed; born and died cannot return it
}

func newTorchSnapExport(w io.Writer) *torchSnapExport {
	return &torchSnapExport{w: torchsnap.NewWriter(w)}
}

func (x *torchSnapExport) write(action string, l *life, at stamp) {
	if x.err != nil {
		return
	}
	e := torchsnap.Entry{Action: action, Addr: uint64(l.addr), Size: l.size, Site: l.site}
	if at.hasT {
		e.TimeUS = at.t / 1000
	}
	x.err = x.w.Write(e)
}

func (x *torchSnapExport) begin(traces.Header) error { return nil }

func (x *torchSnapExport) born(l *life) {
	switch l.kind {
	case lkSegment:
		x.write(torchsnap.ActionSegmentAlloc, l, l.made)
	case lkPool:
		x.write(torchsnap.ActionAlloc, l, l.made)
	}
}

func (x *torchSnapExport) died(l *life, at stamp) {
	switch l.kind {
	case lkSegment:
		x.write(torchsnap.ActionSegmentFree, l, at)
	case lkPool:
		x.write(torchsnap.ActionFreeRequested, l, at)
		x.write(torchsnap.ActionFreeCompleted, l, at)
	}
}

func (x *torchSnapExport) counter(stamp, traces.Space, uint64)       {}
func (x *torchSnapExport) violation(*traces.Violation, stamp, *life) {}
func (x *torchSnapExport) unleaked(*life)                            {}

// finish writes the segments live at the end, each with the live pool
// blocks that lie in it.
func (x *torchSnapExport) finish(_ *exportSummary, live []*life, _ stamp) error {
	if x.err != nil {
		return x.err
	}
	var segs []torchsnap.Segment
	index := make(map[*life]int)
	for _, l := range live {
		if l.kind == lkSegment {
			index[l] = len(segs)
			segs = append(segs, torchsnap.Segment{Addr: uint64(l.addr), Size: l.size, Site: l.site})
		}
	}
	for _, l := range live {
		if l.kind != lkPool || l.seg == nil {
			continue
		}
		if i, ok := index[l.seg]; ok {
			segs[i].Blocks = append(segs[i].Blocks, torchsnap.Block{Addr: uint64(l.addr), Size: l.size, Site: l.site})
		}
	}
	return x.w.Close(segs)
}
