package export

import (
	"bufio"
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// Format is an export format.
type Format string

// The formats.
const (
	Perfetto      Format = "perfetto"       // Chrome trace-event JSON, for ui.perfetto.dev
	Pprof         Format = "pprof"          // a profile by allocation site, for go tool pprof
	HTML          Format = "html"           // one self-contained page
	TorchSnapshot Format = "torch-snapshot" // a PyTorch memory snapshot, for pytorch.org/memory_viz
)

// Formats lists every format, in the order the command names them.
func Formats() []Format { return []Format{Perfetto, Pprof, HTML, TorchSnapshot} }

// Binary reports whether the format is binary (no terminal should get it).
func (f Format) Binary() bool { return f == Pprof || f == TorchSnapshot }

// Summary is the model's verdict on the exported trace.
type Summary struct {
	Report     traces.Report // Violations left nil: they stream
	Violations int
	ByKind     map[traces.Kind]int
	// Device is the trace's device memory, allocated (pool blocks) and
	// reserved (segments and mapped ranges), which the device plot's
	// live bytes (reserved) do not tell apart.
	Device   model.DeviceBytes
	snapshot bool // the trace is a snapshot (Options.Snapshot)
}

// WriteError is the writer's failure, which is no fault of the input.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// Options say what an export shows of its input beyond the trace.
type Options struct {
	Name string // the trace's name, which titles show
	// Snapshot says that the trace is a memory snapshot, taken mid-run:
	// the verdict then says why no leak check ran.
	Snapshot bool
	// Page holds results of other analyses (leak suspects, an OOM
	// explanation) that the HTML page shows beside the model's; nil for
	// none.
	Page *PageExtras
	// Watch, when not nil, hears the export's own replay after the
	// export does: an analysis whose results the page shows runs in the
	// same replay, and fills Page's fields by the time its Closed is
	// called (before the page is written).
	Watch *model.Watch
}

// Write replays src against the model and writes it to w in format f.
func Write(w io.Writer, f Format, src traces.Source, opts Options) (*Summary, error) {
	out := bufio.NewWriterSize(w, 64<<10)
	var v view
	switch f {
	case Perfetto:
		v = newPerfetto(out, opts.Name)
	case Pprof:
		v = newPprof(out)
	case HTML:
		h := newHTML(out, opts.Name)
		h.page = newPageBuilder(opts.Page)
		v = h
	case TorchSnapshot:
		v = newTorchSnap(out)
	default:
		return nil, fmt.Errorf("export: unknown format %q", string(f))
	}
	sum, err := run(src, v, opts)
	if err != nil {
		return nil, err
	}
	if err := out.Flush(); err != nil {
		return nil, &WriteError{err}
	}
	return sum, nil
}

// view is one format, fed as the model replays the trace: born and died
// as things are made and end, counter after an event that changed a
// space's live bytes, violation as the model reports one, and finish once.
type view interface {
	begin(h traces.Header) error
	born(t *model.Thing, at stamp)
	died(t *model.Thing, at stamp)
	counter(at stamp, sp traces.Space, bytes uint64)
	// violation hears of a violation found at stamp at. leaked says that
	// it is a leak that counts toward the leaked totals (one found up to
	// end); size is then the bytes of the leaked thing.
	violation(v *traces.Violation, at stamp, leaked bool, size uint64)
	// unleaked hears that a leak no longer counts: a missed free came
	// late, before end.
	unleaked(t *model.Thing)
	// finish ends the export: live are the things still live, in the
	// order made, and last the stamp of the last event.
	finish(sum *Summary, live []model.Thing, last stamp) error
}

// stamp is when an event happened: its number and, where the trace gives
// one, its time.
type stamp struct {
	event int
	t     int64 // ns; meaningful only where hasT
	hasT  bool
}

// run replays src against the model and feeds v. Its error is an input
// error or, as a *WriteError, v's.
func run(src traces.Source, v view, opts Options) (*Summary, error) {
	if err := v.begin(src.Header()); err != nil {
		return nil, &WriteError{err}
	}
	sum := &Summary{ByKind: make(map[traces.Kind]int), snapshot: opts.Snapshot}
	var (
		clock clock
		cur   stamp     // the event being stepped
		prev  traces.Op // the op of the event before it
		ended bool      // the first end has been stepped: later leaks are not counted
		bytes [2]uint64 // live bytes by space
		shown [2]uint64 // live bytes last given to counter
		live  []model.Thing
	)
	counters := func() {
		for _, sp := range []traces.Space{traces.SpaceHeap, traces.SpaceDevice} {
			if bytes[sp] != shown[sp] {
				shown[sp] = bytes[sp]
				v.counter(cur, sp, bytes[sp])
			}
		}
	}
	started := false
	w := &model.Watch{
		Event: func(ev *traces.Event, pos traces.Pos) {
			if started {
				counters() // the event before this one is done
			}
			started = true
			ended = ended || prev == traces.OpEnd
			prev = ev.Op
			cur = clock.stamp(ev, pos)
		},
		Born: func(t model.Thing) {
			sum.Device.Born(t)
			if t.Kind.Counted() {
				bytes[t.Kind.Space()] += t.Size
			}
			v.born(&t, cur)
		},
		Died: func(t model.Thing, event int) {
			sum.Device.Died(t)
			if t.Kind.Counted() {
				bytes[t.Kind.Space()] -= t.Size
			}
			v.died(&t, clock.at(event))
		},
		FreedLate: func(t model.Thing) {
			if !ended {
				v.unleaked(&t)
			}
		},
		Closed: func(l []model.Thing) { live = l },
	}
	if opts.Watch != nil {
		w = chain(w, opts.Watch)
	}
	rep, err := model.ReplayWatched(src, w, func(vl traces.Violation, size uint64) {
		sum.Violations++
		sum.ByKind[vl.Kind]++
		leaked := vl.Kind == traces.Leak && !ended
		v.violation(&vl, clock.at(vl.Event), leaked, size)
	})
	if err != nil {
		return nil, err
	}
	counters()
	sum.Report = rep
	if err := v.finish(sum, live, cur); err != nil {
		return nil, &WriteError{err}
	}
	return sum, nil
}

// clock turns events into stamps. An event's time is its "t" where it has
// one; an event without one after one that had it takes the last time
// seen, so that times never run backwards for want of a field.
//
// A life can end, and a violation be named, at an event before the
// current one: an object whose free was missed dies at the call that made
// it due, heard of at the next call. So the clock keeps the times since
// the call before the last one (the model reports nothing older), as the
// points where the time changed.
type clock struct {
	t      int64
	hasT   bool
	points []stamp // where the time changed, oldest first
	calls  [2]int  // the last two calls' events
}

func (k *clock) stamp(ev *traces.Event, pos traces.Pos) stamp {
	if ev.T != 0 && (ev.T != k.t || !k.hasT) {
		k.t, k.hasT = ev.T, true
		k.points = append(k.points, stamp{event: pos.Event, t: k.t, hasT: true})
	}
	if ev.Op != traces.OpFree {
		k.calls = [2]int{k.calls[1], pos.Event}
		k.trim()
	}
	return stamp{event: pos.Event, t: k.t, hasT: k.hasT}
}

// trim forgets the change points before the call before the last one,
// but the last of them, which holds the time at that call.
func (k *clock) trim() {
	i := 0
	for i+1 < len(k.points) && k.points[i+1].event <= k.calls[0] {
		i++
	}
	if i > 0 {
		k.points = append(k.points[:0], k.points[i:]...)
	}
}

// at is the stamp of a recent event.
func (k *clock) at(event int) stamp {
	for i := len(k.points) - 1; i >= 0; i-- {
		if p := k.points[i]; p.event <= event {
			return stamp{event: event, t: p.t, hasT: true}
		}
	}
	return stamp{event: event}
}

// chain is a watch that hears what a does, then b.
func chain(a, b *model.Watch) *model.Watch {
	return &model.Watch{
		Event: func(ev *traces.Event, pos traces.Pos) {
			a.Event(ev, pos)
			if b.Event != nil {
				b.Event(ev, pos)
			}
		},
		Born: func(t model.Thing) {
			a.Born(t)
			if b.Born != nil {
				b.Born(t)
			}
		},
		Died: func(t model.Thing, event int) {
			a.Died(t, event)
			if b.Died != nil {
				b.Died(t, event)
			}
		},
		Missed: b.Missed, // the export's own watch hears none
		FreedLate: func(t model.Thing) {
			a.FreedLate(t)
			if b.FreedLate != nil {
				b.FreedLate(t)
			}
		},
		Closed: func(l []model.Thing) {
			a.Closed(l)
			if b.Closed != nil {
				b.Closed(l)
			}
		},
	}
}
