package model

import (
	"errors"
	"io"
	"sync"

	"github.com/tlcheck/tlcheck/traces"
)

// Checker checks one trace. It keeps objects by identity, not by address,
// so address reuse cannot fool it, and it streams: its memory grows with
// what is alive (and with the address ranges the trace has used), never
// with the number of events. A Checker is for one goroutine; Checkers share
// nothing, so traces can be checked in parallel.
type Checker struct {
	effects bool

	mem    memory     // the things remembered, by address, in each space
	wheres whereTable // lines and sites of things' events, shared
	nlive  int        // live and due things
	scopes []scope
	frames []frame
	params map[string]param
	saved  map[string]*savedVar // layer 5: saved tensors by name

	// Effects: objects whose count reached 0 at the last call and whose
	// free is awaited, and the stale records the last call's scope exit
	// skipped (a free of their address is stale-reuse).
	due   []*thing
	stale []record

	made      int    // things made; the last thing's number
	liveBytes uint64 // bytes of live blocks, objects, buffers and segments
	peak      uint64
	events    int
	ended     bool // an end event was seen
	endAt     hist // the first end event, once ended
	closed    bool
	missed    traces.Totals // effects: objects reported as missed frees and not freed late
	leaked    traces.Totals // the end's: missed then, and the leaks it found
	reachable traces.Totals
	epoch     uint32 // for marking reachable objects at end

	// The event being stepped.
	pos      traces.Pos
	here     hist
	hereW    *where // here's where record, once needed
	call     hist   // the last event other than a free
	callOp   traces.Op
	out      []traces.Violation
	order    *orderer // Replay's: where violations go instead of out
	watch    *Watch   // the hooks views hear lives by; nil: none
	born     *thing   // watched: the thing the event made, told of after it
	work     []*thing
	stateBuf []*thing // State's scratch: the live objects, by id
}

// New returns a Checker for a trace with header h.
func New(h traces.Header) *Checker {
	c := &Checker{mem: newMemory(), wheres: newWhereTable(), params: make(map[string]param)}
	c.Reset(h)
	return c
}

// Reset makes c a Checker for a new trace with header h, as New(h) returns
// one, whatever c checked before. It keeps memory c grew, emptied, for the
// next trace: the index's tables (see index.Interface), the where table,
// the params and saved-tensor maps and the arrays of its buffers; every
// other field starts afresh. A caller that checks trace after trace, as
// the property tests and the fuzz targets do, so allocates them once.
// TestResetIsNew holds Reset to New field by field, and
// TestResetChecksLikeNew holds a reset Checker's verdicts to a new one's.
//
// The scope and frame stacks start afresh too: scope_enter and fn_enter
// reuse a popped scope's or frame's arrays when there is one, and had the
// stacks been kept, whether there was would depend on the traces checked
// before. A coverage-guided fuzzer reads such a difference as new
// coverage of the same input (properties.Passes).
func (c *Checker) Reset(h traces.Header) {
	keep := Checker{
		mem: c.mem, wheres: c.wheres,
		params: c.params, saved: c.saved,
		due: c.due[:0], stale: c.stale[:0],
		out: c.out[:0], work: c.work[:0], stateBuf: c.stateBuf[:0],
	}
	*c = keep // every field not kept is zero
	c.effects = h.Effects
	c.call = hist{event: -1}
	c.mem.reset()
	c.wheres.reset()
	clear(c.params)
	clear(c.saved)
}

// Step checks one event at pos. It returns the violations the event
// revealed, in order (the slice is valid until the next call), or an error
// (*traces.Error) when the event cannot be taken as input at all, such as a
// free of a managed object in a trace without effects.
//
// With effects, a missed free is found at the first event after the call
// that made it due and is named after that call, so it comes out of Step
// after violations of the frees in between; Replay restores event order.
func (c *Checker) Step(ev *traces.Event, pos traces.Pos) ([]traces.Violation, error) {
	c.out = c.out[:0]
	c.events++
	c.pos = pos
	c.here, c.hereW = hist{event: pos.Event, line: pos.Line, site: ev.Site}, nil
	if c.watch != nil || ev.HasCount {
		return c.out, c.stepMore(ev, pos)
	}
	// Neither watched nor counted, as every event of a heap log: the
	// rules alone, in a Step small enough to inline into Replay's loop.
	if ev.Op != traces.OpFree {
		c.settle()
	}
	err := c.dispatch(ev)
	if ev.Op != traces.OpFree {
		c.call, c.callOp = c.here, ev.Op
	}
	return c.out, err
}

// stepMore is Step for an event that a Watch hears of or that states a
// count (see checkCount): what only those events pay for.
func (c *Checker) stepMore(ev *traces.Event, pos traces.Pos) error {
	if c.watch != nil && c.watch.Event != nil {
		c.watch.Event(ev, pos)
	}
	if ev.Op != traces.OpFree {
		c.settle()
	}
	var counted *thing
	if ev.HasCount {
		counted = c.countTarget(ev)
	}
	err := c.dispatch(ev)
	if ev.HasCount {
		c.checkCount(ev, counted)
	}
	if c.born != nil {
		c.watchBorn()
	}
	if ev.Op != traces.OpFree {
		c.call, c.callOp = c.here, ev.Op
	}
	return err
}

func (c *Checker) dispatch(ev *traces.Event) error {
	switch ev.Op {
	case traces.OpMalloc:
		c.malloc(ev.Op, ev.Addr, ev.Size)
	case traces.OpFree:
		return c.free(ev.Op, ev.Addr)
	case traces.OpRealloc:
		return c.realloc(ev)
	case traces.OpRead, traces.OpWrite:
		c.access(ev)
	case traces.OpScopeEnter:
		c.scopeEnter(ev.Op)
	case traces.OpScopeExit:
		c.scopeExit(ev.Op)
	case traces.OpAlloc, traces.OpStructInit:
		c.alloc(ev)
	case traces.OpAcquire:
		c.acquire(ev.Op, ev.Addr)
	case traces.OpRelease:
		c.releaseOp(ev.Op, ev.Addr)
	case traces.OpRegister:
		c.register(ev.Op, ev.Addr)
	case traces.OpUnregister:
		c.unregister(ev.Op, ev.Addr)
	case traces.OpParamRegister:
		c.paramRegister(ev.Op, ev.Name, ev.Addr)
	case traces.OpParamRelease:
		c.paramRelease(ev.Op, ev.Name)
	case traces.OpEnd:
		c.end(ev.Op)
	case traces.OpFnEnter:
		c.fnEnter(ev.Op, ev.Slots)
	case traces.OpFnExit:
		c.fnExit(ev.Op)
	case traces.OpArenaGet:
		c.arenaGet(ev)
	case traces.OpDevMalloc:
		c.devMalloc(ev.Op, ev.Addr, ev.Size)
	case traces.OpDevFree:
		c.devFree(ev.Op, ev.Addr)
	case traces.OpPoolGet:
		c.poolGet(ev.Op, ev.Addr, ev.Size)
	case traces.OpPoolPut:
		c.poolPut(ev.Op, ev.Addr)
	case traces.OpRecordStream:
		c.recordStream(ev.Op, ev.Addr)
	case traces.OpDevMap:
		c.devMap(ev.Op, ev.Addr, ev.Size)
	case traces.OpDevUnmap:
		c.devUnmap(ev.Op, ev.Addr, ev.Size)
	case traces.OpSave:
		c.save(ev.Op, ev.Name, ev.Addr, ev.Kind == "data")
	case traces.OpUnpack:
		c.unpack(ev.Op, ev.Name)
	case traces.OpUnsave:
		c.unsave(ev.Op, ev.Name)
	case traces.OpBump:
		c.bump(ev.Op, ev.Addr, ev.Kind)
	case traces.OpLeafGrad:
		c.leafGrad(ev.Op, ev.Addr)
	case traces.OpSnapshot:
		c.snapshot(ev.Op, ev.Name, ev.Addr)
	case traces.OpRestore:
		c.restore(ev.Op, ev.Name, ev.Addr)
	case traces.OpRecompute:
		c.recompute(ev.Op, ev.Name)
	default:
		return c.inputError("op", errors.New("the model has no rule for op "+ev.Op.String()))
	}
	return nil
}

// Close ends the trace, whether or not it reached end. Frees still due
// after the last call (with effects) are not claimed as leaks: the run may
// have stopped between the call and its frees. It returns the violations
// found on closing, which the contract makes none today; calls after the
// first return nil.
func (c *Checker) Close() []traces.Violation {
	c.out = c.out[:0]
	if !c.closed {
		c.closed = true
		c.abandon()
		c.watchClosed()
	}
	return c.out
}

// Report returns the totals so far: events, objects made, peak live bytes,
// leaked and still-reachable objects and whether end was reached. Its
// Violations field is left nil; Replay collects them.
//
// The leaked and still-reachable totals are the end's: zero until end, as
// the contract has it, even when effects found a missed free (a leak)
// before the trace stopped. At end, leaked counts the missed frees not
// freed late as well as what the end found.
func (c *Checker) Report() traces.Report {
	leaked, reachable := c.leaked, c.reachable
	if !c.ended {
		leaked, reachable = traces.Totals{}, traces.Totals{}
	}
	return traces.Report{
		Events:         c.events,
		Leaked:         leaked,
		StillReachable: reachable,
		Complete:       c.ended,
		Objects:        c.made,
		PeakLiveBytes:  c.peak,
	}
}

// Replay checks every event of src and returns the full report, its
// violations in event order. Its error is non-nil only when the input could
// not be read (exit 2 material); the report is then empty.
func Replay(src traces.Source) (traces.Report, error) {
	vs := []traces.Violation{}
	rep, err := ReplayFunc(src, func(v traces.Violation, _ uint64) { vs = append(vs, v) })
	if err != nil {
		return traces.Report{}, err
	}
	rep.Violations = vs
	return rep, nil
}

// ReplayFunc checks every event of src as Replay does, but hands each
// violation to f, in event order, as soon as it is final, and keeps none:
// its memory grows with what the trace keeps alive, never with what it
// reports, so a trace that leaks millions of objects can be summed up as
// it goes. size is the bytes of the thing the violation names, 0 for none.
// The report's Violations is nil. On an input error f has seen the
// violations of the events before it, and the report is empty.
func ReplayFunc(src traces.Source, f func(v traces.Violation, size uint64)) (traces.Report, error) {
	c := reuse(src.Header())
	defer retire(c)
	return c.replayFunc(src, nil, f)
}

// ReplayFunc replays src as the package's ReplayFunc does, on c, Reset
// for src's header, rather than on a spare Checker: a caller that keeps
// its own Checker makes a replay that depends on nothing an earlier
// replay left (coverage-guided fuzzing needs the same input to take the
// same path every time, and spare Checkers come and go with the garbage
// collector). c is then done with src and may be Reset for another trace.
func (c *Checker) ReplayFunc(src traces.Source, f func(v traces.Violation, size uint64)) (traces.Report, error) {
	c.Reset(src.Header())
	return c.replayFunc(src, nil, f)
}

// replayFunc replays src on c, telling w (nil: no one) of the lives it
// sees.
func (c *Checker) replayFunc(src traces.Source, w *Watch, f func(v traces.Violation, size uint64)) (traces.Report, error) {
	r := replay{c: c}
	c.watch = w
	c.order = &orderer{f: f}
	defer func() { c.order, c.watch = nil, nil }() // nothing of the caller's is kept alive
	if err := r.feed(src); err != nil {
		return traces.Report{}, err
	}
	c.Close()
	c.order.flush()
	return c.Report(), nil
}

// spare holds Checkers that replays are done with, for the next replay to
// Reset rather than make anew: property tests and fuzz targets replay
// traces of a few dozen events by the thousand, and a new Checker's
// tables cost more than checking one of them.
var spare sync.Pool

// reuse returns a Checker for a trace with header h: a spare one, Reset,
// or a new one.
func reuse(h traces.Header) *Checker {
	if c, ok := spare.Get().(*Checker); ok {
		c.Reset(h)
		return c
	}
	return New(h)
}

// maxSpareThings bounds the things a spare Checker may have made: one
// that checked a big trace is left to the garbage collector with all its
// memory, rather than kept in spare.
const maxSpareThings = 1 << 12

// retire hands c, which its replay is done with, to spare.
func retire(c *Checker) {
	c.order, c.watch = nil, nil // nothing of the replay's caller is kept alive
	if c.made <= maxSpareThings {
		spare.Put(c)
	}
}

// feedBatch is how many events feed reads before it steps them. Reading
// and checking in turns at every event, each evicts the other's code and
// data from the caches: batches cost a twentieth less.
const feedBatch = 256

// replay is Replay's loop: a Checker whose violations go to its orderer.
type replay struct {
	c *Checker
}

func (r *replay) step(ev *traces.Event, pos traces.Pos) error {
	o := r.c.order
	o.cur, o.call = pos.Event, ev.Op != traces.OpFree
	_, err := r.c.Step(ev, pos)
	if o.call && len(o.pending) > 0 {
		o.flush()
	}
	return err
}

// feed steps every event of src, with its position, in order, and returns
// nil at the end, or the first error of src or of Step (an event that
// could not be read ends the feed after the events before it). A Lender's
// events are stepped where they lie; from another Source, feed reads a
// batch ahead, each event into a slot of its own, and keeps each slot's
// fields, which a Source may reuse at its next call, in the slot.
func (r *replay) feed(src traces.Source) error {
	if l, ok := src.(traces.Lender); ok {
		for {
			ev, pos, err := l.Lend()
			if err != nil {
				return noEOF(err)
			}
			if err := r.step(ev, pos); err != nil {
				return err
			}
		}
	}
	evs := make([]traces.Event, feedBatch)
	pos := make([]traces.Pos, feedBatch)
	fields := make([][]traces.Addr, feedBatch)
	for {
		n := 0
		var readErr error
		for ; n < feedBatch; n++ {
			ev := &evs[n]
			if readErr = src.Next(ev); readErr != nil {
				break
			}
			if len(ev.Fields) > 0 {
				fields[n] = append(fields[n][:0], ev.Fields...)
				ev.Fields = fields[n]
			}
			pos[n] = src.Pos()
		}
		for i := range n {
			if err := r.step(&evs[i], pos[i]); err != nil {
				return err
			}
		}
		if readErr != nil {
			return noEOF(readErr)
		}
	}
}

// noEOF returns err, or nil for io.EOF: the end of a trace is no error.
func noEOF(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// inputError is an event the model cannot take as input.
func (c *Checker) inputError(field string, err error) error {
	return &traces.Error{Line: c.pos.Line, Event: c.pos.Event, Field: field, Err: err}
}
