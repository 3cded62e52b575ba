package export

import (
	"io"

	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// torchSnapExport writes a trace's device layer as a PyTorch memory
// snapshot for pytorch.org/memory_viz: segments' and pool blocks' lives
// as trace entries, as they begin and end, and the segments live at the
// end with their blocks. It is fed by the model's hooks, so what it writes
// is what the model holds happened: a free of what was never live, which
// the model reports, has no entry (memory_viz could not draw it). A freed
// block gets free_requested and free_completed, as PyTorch writes them;
// every entry's frames are the site that made the thing, escaped
// (safetext): Python refuses a pickle whose strings are not UTF-8.
type torchSnapExport struct {
	w   *torchsnap.Writer
	err error // the first write that failed; born and died cannot return it
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
	switch l.Kind {
	case model.Segment:
		x.write(torchsnap.ActionSegmentAlloc, l, at)
	case model.PoolBlock:
		x.write(torchsnap.ActionAlloc, l, at)
	}
}

func (x *torchSnapExport) died(l *model.Thing, at stamp) {
	switch l.Kind {
	case model.Segment:
		x.write(torchsnap.ActionSegmentFree, l, at)
	case model.PoolBlock:
		x.write(torchsnap.ActionFreeRequested, l, at)
		x.write(torchsnap.ActionFreeCompleted, l, at)
	}
}

func (x *torchSnapExport) counter(stamp, traces.Space, uint64)              {}
func (x *torchSnapExport) violation(*traces.Violation, stamp, bool, uint64) {}
func (x *torchSnapExport) unleaked(*model.Thing)                            {}

// finish writes the segments live at the end, each with the live pool
// blocks that lie in it.
func (x *torchSnapExport) finish(_ *Summary, live []model.Thing, _ stamp) error {
	if x.err != nil {
		return x.err
	}
	var segs []torchsnap.Segment
	index := make(map[int]int) // a segment's number -> its index in segs
	for _, l := range live {
		if l.Kind == model.Segment {
			index[l.ID] = len(segs)
			segs = append(segs, torchsnap.Segment{Addr: uint64(l.Addr), Size: l.Size, Site: safetext.Escape(l.Site)})
		}
	}
	for _, l := range live {
		if l.Kind != model.PoolBlock || l.Segment == 0 {
			continue
		}
		if i, ok := index[l.Segment]; ok {
			segs[i].Blocks = append(segs[i].Blocks, torchsnap.Block{Addr: uint64(l.Addr), Size: l.Size, Site: safetext.Escape(l.Site)})
		}
	}
	return x.w.Close(segs)
}
