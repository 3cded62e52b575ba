package torchsnap

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// SourceName is the header's Source for every snapshot.
const SourceName = "pytorch memory snapshot"

// Limits bound what a Reader holds; the zero value means the defaults.
// None of them grows with the snapshot's size: a snapshot of any size
// that PyTorch writes is read within them.
type Limits struct {
	// MaxBytes is the largest pickle read; 0 (the default) means any.
	MaxBytes int64
	// MaxString is the longest string held (default 64 KiB). A longer
	// one is read past without being held, and is an error only in a
	// field tlcheck reads (an action, a block's state, a frame's
	// filename or name).
	MaxString int
	// MaxSites bounds the bytes of the distinct sites ("file:line") made
	// from frames (default 32 MiB). The frames of a snapshot refer to
	// their strings, so one filename can be in any number of sites.
	MaxSites int64
	// Stacks keeps each entry's, block's and segment's Python frames for
	// Reader.Stack. Off, a stack is its site alone: a snapshot whose every
	// entry has a stack of its own would otherwise hold a few hundred
	// bytes more an entry (the frames count toward MaxSites).
	Stacks bool
}

const defaultMaxSites = 32 << 20

func (l Limits) orDefaults() Limits {
	if l.MaxString <= 0 {
		l.MaxString = defaultMaxString
	}
	if l.MaxSites <= 0 {
		l.MaxSites = defaultMaxSites
	}
	return l
}

// Error is a snapshot that cannot be read: Where names the place, a byte
// offset in the pickle ("byte 1234") or a path in the snapshot
// ("device_traces[0][17].addr").
type Error struct {
	Where string
	Err   error
}

func (e *Error) Error() string {
	if e.Where == "" {
		return e.Err.Error()
	}
	return e.Where + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Reader yields a snapshot's events. It implements traces.Source.
type Reader struct {
	sh      *shaper
	prelude []traces.Event // what was live before the trace began
	order   []int32        // the trace's entries that yield events, in order
	next    int
	pos     traces.Pos
	streams map[int64]string // "stream N", made once for each stream
	ooms    []OOM

	preludeStack []int32 // each prelude event's stack
	pending      []int32 // the pool_put events whose block waited (Pending), in order
}

// Pending reports whether event n is a pool_put whose block waited
// between its free_requested and its free_completed entries (other
// entries came between them): a block freed while another stream still
// used it (record_stream), which the allocator gave back when that
// stream's work was done, at a malloc or empty_cache, or while it freed
// its cache under memory pressure.
func (r *Reader) Pending(n int) bool {
	_, ok := slices.BinarySearch(r.pending, int32(n))
	return ok
}

// Stats says what a snapshot held beside the events.
type Stats struct {
	Entries       int // trace entries, over all devices
	Prelude       int // events made for what was live before the trace began
	LiveSegments  int // segments live when the snapshot was taken
	LiveBlocks    int // blocks allocated (or awaiting free) then
	FreeRequested int // free_requested entries, which yield no event
}

// NewReader reads a whole snapshot from r with the default limits.
func NewReader(r io.Reader) (*Reader, error) { return NewReaderLimits(r, Limits{}) }

// NewReaderLimits reads a whole snapshot from r, as a stream, within lim.
// Its error is an *Error naming the place, or the reader's own.
func NewReaderLimits(r io.Reader, lim Limits) (*Reader, error) {
	lim = lim.orDefaults()
	sh := newShaper(lim)
	m := &machine{
		in:  bufio.NewReaderSize(r, 1<<20),
		lim: limits{maxString: lim.MaxString, maxStack: defaultMaxStack, maxHeld: defaultMaxHeld, maxBytes: lim.MaxBytes},
		sh:  sh,
	}
	v, err := m.run()
	if err != nil {
		return nil, err
	}
	if err := sh.top_(m, v); err != nil {
		return nil, err
	}
	return sh.events(), nil
}

// top_ checks the pickle's value: the top dict, with both lists.
func (sh *shaper) top_(m *machine, v val) error {
	if v.k != kObj || v.obj() != sh.top {
		what := typeName(v)
		if v.k == kObj && v.obj().kind == 'l' || v.k == kSkip && byte(v.i) == 'l' {
			what += " (an old snapshot of segments alone, with no trace to check)"
		} else if v.k == kObj && v.obj().kind == 'd' && sh.top != nil {
			// Python returns the last value; tlcheck reads the snapshot
			// as it streams, from the first dict at the top of the stack.
			what = fmt.Sprintf("the dict made at byte %d, after the dict made at byte %d, which tlcheck reads as the snapshot "+
				"(the first dict made with nothing below it on the pickle's stack; PyTorch makes no dict before the snapshot's)",
				v.obj().at, sh.top.at)
		} else if v.k == kObj && v.obj().kind == 'd' {
			what = fmt.Sprintf("the dict made at byte %d with other values below it on the pickle's stack, where PyTorch makes the snapshot's with none", v.obj().at)
		}
		return &Error{Where: "snapshot", Err: fmt.Errorf("want a dict with segments and device_traces, got %s", what)}
	}
	if !sh.top.has(0) {
		return &Error{Where: "snapshot", Err: errors.New(`no "segments": not a PyTorch memory snapshot`)}
	}
	if !sh.top.has(1) {
		return &Error{Where: "snapshot", Err: errors.New(`no "device_traces": the snapshot was taken without torch.cuda.memory._record_memory_history(), so it has no trace to check`)}
	}
	return nil
}

// events orders the trace's entries and rebuilds what was live before it.
func (sh *shaper) events() *Reader {
	r := &Reader{sh: sh, streams: make(map[int64]string)}
	var all []int32
	for _, d := range sh.devOrder {
		all = append(all, sh.traces[d]...)
	}
	if len(sh.devOrder) > 1 {
		// Devices share one address space (CUDA's unified addressing), so
		// their traces merge into one, in time order; a stable sort keeps
		// each device's own order, and device order where times tie.
		slices.SortStableFunc(all, func(a, b int32) int { return cmp.Compare(sh.ents[a].t, sh.ents[b].t) })
	}
	sh.stats.Entries = len(all)

	// What was live before the trace began: undo the entries, newest
	// first, from the state at the snapshot (as memory_viz does to draw
	// its first frame). An entry that contradicts the state (a free of
	// what is not live) is left for the model to judge going forward.
	segs, blocks, mapped := sh.segs, sh.live, sh.mapped
	for i := len(all) - 1; i >= 0; i-- {
		e := &sh.ents[all[i]]
		switch e.action {
		case aAlloc:
			delete(blocks, e.addr)
		case aFreeCompleted:
			if _, ok := blocks[e.addr]; !ok {
				blocks[e.addr] = live{e.size, e.site}
			}
		case aSegmentAlloc:
			delete(segs, e.addr)
		case aSegmentFree:
			if _, ok := segs[e.addr]; !ok {
				segs[e.addr] = live{e.size, e.site}
			}
		case aSegmentMap:
			if e.size > 0 {
				mapped = cutSpan(mapped, spanOf(e.addr, e.size, -1))
			}
		case aSegmentUnmap:
			if e.size > 0 {
				mapped = addSpan(mapped, spanOf(e.addr, e.size, e.site))
			}
		}
	}
	r.prelude, r.preludeStack = sh.prelude(segs, mapped, blocks)
	sh.segs, sh.live, sh.mapped = nil, nil, nil
	sh.stats.Prelude = len(r.prelude)

	r.order = all[:0]
	requested := int32(-1) // the entry before, where it is a free_requested
	for _, i := range all {
		e := &sh.ents[i]
		switch e.action {
		case aFreeRequested:
			sh.stats.FreeRequested++
		case aOther:
		case aOOM:
			r.ooms = append(r.ooms, r.oomOf(e, len(r.prelude)+len(r.order)))
		case aFreeCompleted:
			if requested < 0 || sh.ents[requested].addr != e.addr {
				r.pending = append(r.pending, int32(len(r.prelude)+len(r.order)))
			}
			r.order = append(r.order, i)
		default:
			r.order = append(r.order, i)
		}
		requested = -1
		if e.action == aFreeRequested {
			requested = i
		}
	}
	return r
}

// site returns the site of a stack (what entries, blocks and segments
// keep of their frames), "" for none.
func (sh *shaper) site(stack int32) string {
	if stack < 0 {
		return ""
	}
	if i := sh.stacks[stack].site; i >= 0 {
		return sh.sites[i]
	}
	return ""
}

// Header returns the header every snapshot gets: no effects, Source
// SourceName.
func (r *Reader) Header() traces.Header {
	return traces.Header{Format: traces.FormatName, Version: traces.Version, Source: SourceName}
}

// Next fills ev with the next event, or returns io.EOF after the last one.
// A snapshot yields no end event (see the package comment).
func (r *Reader) Next(ev *traces.Event) error {
	n := r.next
	switch {
	case n < len(r.prelude):
		*ev = r.prelude[n]
	case n-len(r.prelude) < len(r.order):
		e := &r.sh.ents[r.order[n-len(r.prelude)]]
		*ev = traces.Event{Addr: traces.Addr(e.addr), Site: r.sh.site(e.site), T: e.t}
		if e.stream != 0 {
			name, ok := r.streams[e.stream]
			if !ok {
				name = "stream " + strconv.FormatInt(e.stream, 10)
				r.streams[e.stream] = name
			}
			ev.Thread = name
		}
		switch e.action {
		case aSegmentAlloc:
			ev.Op, ev.Size, ev.HasSize = traces.OpDevMalloc, e.size, true
		case aSegmentFree:
			ev.Op = traces.OpDevFree
		case aAlloc:
			ev.Op, ev.Size, ev.HasSize = traces.OpPoolGet, e.size, true
		case aFreeCompleted:
			ev.Op = traces.OpPoolPut
		case aSegmentMap:
			ev.Op, ev.Size, ev.HasSize = traces.OpDevMap, e.size, true
		case aSegmentUnmap:
			ev.Op, ev.Size, ev.HasSize = traces.OpDevUnmap, e.size, true
		}
	default:
		return io.EOF
	}
	r.pos = traces.Pos{Event: n}
	r.next++
	return nil
}

// Pos returns the position of the event last returned by Next; a pickle
// has no lines, so Line is 0.
func (r *Reader) Pos() traces.Pos { return r.pos }

// Stats returns what the snapshot held beside its events.
func (r *Reader) Stats() Stats { return r.sh.stats }
