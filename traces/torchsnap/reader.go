package torchsnap

import (
	"errors"
	"fmt"
	"io"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	ogorek "github.com/kisielk/og-rek"

	"github.com/tlcheck/tlcheck/traces"
)

// SourceName is the header's Source for every snapshot.
const SourceName = "pytorch memory snapshot"

// Limits bound what a Reader accepts; the zero value means the defaults.
type Limits struct {
	// MaxBytes is the largest pickle read (default 1 GiB).
	MaxBytes int64
	// MaxDecoded bounds the memory decoding may allocate, as the scan
	// reckons it from above (default 8 GiB). The bound is about 100
	// times a real snapshot's size, which allocates about 30 times its
	// size and keeps about 10, so the default admits snapshots of up to
	// about 80 MB.
	MaxDecoded int64
}

const (
	defaultMaxBytes   = 1 << 30
	defaultMaxDecoded = 8 << 30
)

func (l Limits) orDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = defaultMaxBytes
	}
	if l.MaxDecoded <= 0 {
		l.MaxDecoded = defaultMaxDecoded
	}
	return l
}

// Error is a snapshot that cannot be read: Where names the place, a byte
// offset in the pickle ("byte 1234") or a path in the decoded snapshot
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
	events []traces.Event
	next   int
	pos    traces.Pos
	stats  Stats

	// A pickle can refer to one value many times for two bytes each (the
	// memo), so a small pickle can hold one frames list in a million
	// entries, or one huge filename in a million frames. What reading
	// visits is held to a budget that grows with the input, and what
	// frames yield is cached by identity, so that time and memory grow
	// with the pickle, never with what it refers to.
	budget  int                     // entries, blocks and segments
	fbudget int                     // frames
	sites   map[listKey]string      // a frames list's site
	hidden  map[strKey]bool         // whether memory_viz hides a frame's name or file
	named   map[siteKey]string      // "file:line" strings made
	segSeen map[unsafe.Pointer]bool // segments dicts read
}

type (
	listKey struct {
		p *any
		n int
	}
	strKey struct {
		p    *byte
		n    int
		file bool
	}
	siteKey struct {
		file strKey
		line int64
	}
)

// spend takes n from the budget of what reading may visit: of frames with
// frames, else of entries, blocks and segments.
func (r *Reader) spend(n int, where string, frames bool) error {
	b := &r.budget
	if frames {
		b = &r.fbudget
	}
	*b -= n
	if *b < 0 {
		return &Error{Where: where, Err: errors.New("the snapshot refers to its own lists so often that reading it would take time and memory out of all proportion to its size; PyTorch never writes such a snapshot")}
	}
	return nil
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

// NewReaderLimits reads a whole snapshot from r, refusing one that exceeds
// lim. Its error is an *Error naming the place, or the reader's own.
func NewReaderLimits(r io.Reader, lim Limits) (*Reader, error) {
	lim = lim.orDefaults()
	data, err := io.ReadAll(io.LimitReader(r, lim.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the snapshot: %w", err)
	}
	if int64(len(data)) > lim.MaxBytes {
		return nil, &Error{Err: fmt.Errorf("the snapshot is larger than %d bytes, the most tlcheck reads", lim.MaxBytes)}
	}
	v, err := decode(data, lim)
	if err != nil {
		return nil, err
	}
	return fromValue(v, len(data))
}

// decode scans and then decodes one pickle.
func decode(data []byte, lim Limits) (v any, err error) {
	res, err := scan(data)
	if err != nil {
		return nil, err
	}
	if res.cost > lim.MaxDecoded {
		return nil, &Error{Err: fmt.Errorf("decoding this pickle could take up to %d bytes of memory, over the limit of %d", res.cost, lim.MaxDecoded)}
	}
	defer func() {
		// The scan admits only opcodes of plain data, and og-rek checks
		// its stack; should it still panic on some input, that input is
		// malformed, and the user gets an error, not a crash.
		if p := recover(); p != nil {
			v, err = nil, &Error{Err: fmt.Errorf("malformed pickle (the decoder failed: %v)", p)}
		}
	}()
	d := ogorek.NewDecoder(&sliceReader{b: relink(data)})
	v, err = d.Decode()
	if err != nil {
		return nil, &Error{Err: fmt.Errorf("malformed pickle: %w", err)}
	}
	return v, nil
}

// sliceReader reads a byte slice (bytes.Reader, without io.Seeker, which
// the decoder does not need).
type sliceReader struct{ b []byte }

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// Header returns the header every snapshot gets: no effects, Source
// SourceName.
func (r *Reader) Header() traces.Header {
	return traces.Header{Format: traces.FormatName, Version: traces.Version, Source: SourceName}
}

// Next fills ev with the next event, or returns io.EOF after the last one.
// A snapshot yields no end event (see the package comment).
func (r *Reader) Next(ev *traces.Event) error {
	if r.next >= len(r.events) {
		return io.EOF
	}
	*ev = r.events[r.next]
	r.pos = traces.Pos{Event: r.next}
	r.next++
	return nil
}

// Pos returns the position of the event last returned by Next; a pickle
// has no lines, so Line is 0.
func (r *Reader) Pos() traces.Pos { return r.pos }

// Stats returns what the snapshot held beside its events.
func (r *Reader) Stats() Stats { return r.stats }

// entry is one trace entry, as far as the events need it.
type entry struct {
	action string
	addr   uint64
	size   uint64
	site   string
	t      int64 // ns; 0 if none
	stream int64
	where  string
}

// live is a segment or block live at some point, with where it was made.
type live struct {
	size uint64
	site string
}

// fromValue turns a decoded snapshot of size bytes into events.
func fromValue(v any, size int) (*Reader, error) {
	top, ok := v.(map[any]any)
	if !ok {
		what := typeName(v)
		if _, isList := v.([]any); isList {
			what += " (an old snapshot of segments alone, with no trace to check)"
		}
		return nil, &Error{Where: "snapshot", Err: fmt.Errorf("want a dict with segments and device_traces, got %s", what)}
	}
	segsV, ok := top["segments"]
	if !ok {
		return nil, &Error{Where: "snapshot", Err: errors.New(`no "segments": not a PyTorch memory snapshot`)}
	}
	tracesV, ok := top["device_traces"]
	if !ok {
		return nil, &Error{Where: "snapshot", Err: errors.New(`no "device_traces": the snapshot was taken without torch.cuda.memory._record_memory_history(), so it has no trace to check`)}
	}
	// Every entry, block and segment PyTorch writes takes more than 16
	// bytes of pickle, and every frame of a list more than 2.
	r := &Reader{budget: size/16 + 1<<12, fbudget: size/2 + 1<<12, sites: make(map[listKey]string), hidden: make(map[strKey]bool), named: make(map[siteKey]string), segSeen: make(map[unsafe.Pointer]bool)}
	segs, blocks, err := r.finalState(segsV)
	if err != nil {
		return nil, err
	}
	entries, err := r.entries(tracesV)
	if err != nil {
		return nil, err
	}

	// What was live before the trace began: undo the entries, newest
	// first, from the state at the snapshot (as memory_viz does to draw
	// its first frame). An entry that contradicts the state (a free of
	// what is not live) is left for the model to judge going forward.
	for i := len(entries) - 1; i >= 0; i-- {
		e := &entries[i]
		switch e.action {
		case "alloc":
			delete(blocks, e.addr)
		case "free_completed":
			if _, ok := blocks[e.addr]; !ok {
				blocks[e.addr] = live{e.size, e.site}
			}
		case "segment_alloc":
			delete(segs, e.addr)
		case "segment_free":
			if _, ok := segs[e.addr]; !ok {
				segs[e.addr] = live{e.size, e.site}
			}
		}
	}
	for _, a := range sortedKeys(segs) {
		r.events = append(r.events, traces.Event{Op: traces.OpDevMalloc, Addr: traces.Addr(a), Size: segs[a].size, HasSize: true, Site: segs[a].site})
	}
	for _, a := range sortedKeys(blocks) {
		r.events = append(r.events, traces.Event{Op: traces.OpPoolGet, Addr: traces.Addr(a), Size: blocks[a].size, HasSize: true, Site: blocks[a].site})
	}
	r.stats.Prelude = len(r.events)

	for i := range entries {
		e := &entries[i]
		ev := traces.Event{Addr: traces.Addr(e.addr), Site: e.site, T: e.t}
		if e.stream != 0 {
			ev.Thread = "stream " + strconv.FormatInt(e.stream, 10)
		}
		switch e.action {
		case "segment_alloc":
			ev.Op, ev.Size, ev.HasSize = traces.OpDevMalloc, e.size, true
		case "segment_free":
			ev.Op = traces.OpDevFree
		case "alloc":
			ev.Op, ev.Size, ev.HasSize = traces.OpPoolGet, e.size, true
		case "free_completed":
			ev.Op = traces.OpPoolPut
		default:
			continue
		}
		r.events = append(r.events, ev)
	}
	return r, nil
}

// finalState reads the segments and their live blocks at the snapshot.
func (r *Reader) finalState(v any) (segs, blocks map[uint64]live, err error) {
	list, err := asList(v, "segments")
	if err != nil {
		return nil, nil, err
	}
	segs, blocks = make(map[uint64]live), make(map[uint64]live)
	for i, sv := range list {
		where := fmt.Sprintf("segments[%d]", i)
		seg, err := asDict(sv, where)
		if err != nil {
			return nil, nil, err
		}
		if err := r.spend(1, where, false); err != nil {
			return nil, nil, err
		}
		if p := reflect.ValueOf(seg).UnsafePointer(); r.segSeen[p] {
			continue // the same segment again, through the memo
		} else {
			r.segSeen[p] = true
		}
		addr, err := uintField(seg, "address", where)
		if err != nil {
			return nil, nil, err
		}
		total, err := uintField(seg, "total_size", where)
		if err != nil {
			return nil, nil, err
		}
		site, err := r.siteOf(seg, where)
		if err != nil {
			return nil, nil, err
		}
		segs[addr] = live{total, site}
		r.stats.LiveSegments++
		bl, ok := seg["blocks"]
		if !ok {
			continue
		}
		bs, err := asList(bl, where+".blocks")
		if err != nil {
			return nil, nil, err
		}
		// A block's address is its segment's plus the sizes before it,
		// as memory_viz reckons it; newer snapshots also write it.
		at := addr
		for j, bv := range bs {
			bw := fmt.Sprintf("%s.blocks[%d]", where, j)
			b, err := asDict(bv, bw)
			if err != nil {
				return nil, nil, err
			}
			if err := r.spend(1, bw, false); err != nil {
				return nil, nil, err
			}
			size, err := uintField(b, "size", bw)
			if err != nil {
				return nil, nil, err
			}
			if _, ok := b["address"]; ok {
				if at, err = uintField(b, "address", bw); err != nil {
					return nil, nil, err
				}
			}
			state, err := strField(b, "state", bw)
			if err != nil {
				return nil, nil, err
			}
			switch state {
			case "active_allocated", "active_pending_free", "active_awaiting_free":
				site, err := r.siteOf(b, bw)
				if err != nil {
					return nil, nil, err
				}
				blocks[at] = live{size, site}
				r.stats.LiveBlocks++
			case "inactive":
			default:
				return nil, nil, &Error{Where: bw + ".state", Err: fmt.Errorf("unknown block state %q (want active_allocated, active_pending_free or inactive)", state)}
			}
			at += size
		}
	}
	return segs, blocks, nil
}

// entries reads every device's trace, merged by time.
func (r *Reader) entries(v any) ([]entry, error) {
	devs, err := asList(v, "device_traces")
	if err != nil {
		return nil, err
	}
	var all []entry
	for d, dv := range devs {
		where := fmt.Sprintf("device_traces[%d]", d)
		list, err := asList(dv, where)
		if err != nil {
			return nil, err
		}
		for i, ev := range list {
			ew := fmt.Sprintf("%s[%d]", where, i)
			if err := r.spend(1, ew, false); err != nil {
				return nil, err
			}
			e, err := r.readEntry(ev, ew)
			if err != nil {
				return nil, err
			}
			if e.action == "free_requested" {
				r.stats.FreeRequested++
			}
			all = append(all, e)
		}
	}
	r.stats.Entries = len(all)
	if len(devs) > 1 {
		// Devices share one address space (CUDA's unified addressing), so
		// their traces merge into one, in time order; a stable sort keeps
		// each device's own order, and device order where times tie.
		sort.SliceStable(all, func(i, j int) bool { return all[i].t < all[j].t })
	}
	return all, nil
}

// readEntry reads one trace entry.
func (r *Reader) readEntry(v any, where string) (entry, error) {
	d, err := asDict(v, where)
	if err != nil {
		return entry{}, err
	}
	e := entry{where: where}
	if e.action, err = strField(d, "action", where); err != nil {
		return e, err
	}
	switch e.action {
	case "alloc", "segment_alloc":
		if e.size, err = uintField(d, "size", where); err != nil {
			return e, err
		}
		fallthrough
	case "free_completed", "segment_free":
		if e.addr, err = uintField(d, "addr", where); err != nil {
			return e, err
		}
		if _, ok := d["size"]; ok && e.size == 0 {
			if e.size, err = uintField(d, "size", where); err != nil {
				return e, err
			}
		}
	case "free_requested", "oom", "snapshot", "annotate":
		// No change of state: see the package comment.
	case "segment_map", "segment_unmap":
		return e, &Error{Where: where + ".action", Err: fmt.Errorf("%q: snapshots of expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) map parts of one reservation, which tlcheck's segments cannot express; record without expandable segments", e.action)}
	default:
		return e, &Error{Where: where + ".action", Err: fmt.Errorf("unknown action %q (want alloc, free_requested, free_completed, segment_alloc, segment_free, oom or snapshot)", e.action)}
	}
	if e.site, err = r.siteOf(d, where); err != nil {
		return e, err
	}
	if _, ok := d["stream"]; ok {
		s, err := intField(d, "stream", where)
		if err != nil {
			return e, err
		}
		e.stream = s
	}
	if _, ok := d["time_us"]; ok {
		us, err := intField(d, "time_us", where)
		if err != nil {
			return e, err
		}
		if us > 0 && us < 1<<53 {
			e.t = us * 1000
		}
	}
	return e, nil
}

// siteOf returns the site of d's "frames" (see topFrame), or "" where it
// has none.
func (r *Reader) siteOf(d map[any]any, where string) (string, error) {
	fv, ok := d["frames"]
	if !ok {
		return "", nil
	}
	frames, err := asList(fv, where+".frames")
	if err != nil || len(frames) == 0 {
		return "", err
	}
	key := listKey{&frames[0], len(frames)}
	if site, ok := r.sites[key]; ok {
		return site, nil
	}
	site, err := r.topFrame(frames, where)
	if err != nil {
		return "", err
	}
	r.sites[key] = site
	return site, nil
}

// topFrame picks a frames list's site: its innermost Python frame (a
// filename ending in ".py"), else its innermost frame that memory_viz
// shows and that names a file. With stacks="all", PyTorch's default, the
// innermost frames are the allocator's own C++ (CUDACachingAllocator.cpp),
// the same for every entry; the Python line is the one a user wrote or
// can find.
func (r *Reader) topFrame(frames []any, where string) (string, error) {
	var fallback *siteKey
	for i, f := range frames {
		fw := fmt.Sprintf("%s.frames[%d]", where, i)
		if err := r.spend(1, fw, true); err != nil {
			return "", err
		}
		fd, err := asDict(f, fw)
		if err != nil {
			return "", err
		}
		file, err := strField(fd, "filename", fw)
		if err != nil {
			return "", err
		}
		name := ""
		if _, ok := fd["name"]; ok {
			if name, err = strField(fd, "name", fw); err != nil {
				return "", err
			}
		}
		if file == "" || file == "??" || r.hides(name, false) || r.hides(file, true) {
			continue
		}
		line := int64(0)
		if _, ok := fd["line"]; ok {
			if line, err = intField(fd, "line", fw); err != nil {
				return "", err
			}
		}
		key := siteKey{strKey{unsafe.StringData(file), len(file), true}, line}
		if strings.HasSuffix(file, ".py") {
			return r.siteName(key, file), nil
		}
		if fallback == nil {
			fallback = &key
		}
	}
	if fallback == nil {
		return "", nil
	}
	return r.siteName(*fallback, unsafe.String(fallback.file.p, fallback.file.n)), nil
}

// siteName returns "file:line" ("file" where line is 0), made once for
// each file and line.
func (r *Reader) siteName(key siteKey, file string) string {
	site, ok := r.named[key]
	if !ok {
		site = file
		if key.line > 0 {
			site += ":" + strconv.FormatInt(key.line, 10)
		}
		r.named[key] = site
	}
	return site
}

// omitFunctions and omitFilenames are the frames memory_viz hides (the
// stack unwinder, the interpreter loop, the dispatcher), so that the site
// is the frame a user reads first.
var (
	omitFunctions = []string{"unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp", "_start", "__libc_start_main", "PyEval_", "PyObject_", "PyFunction_"}
	omitFilenames = []string{"core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c", "Objects/call.c", "Objects/methodobject.c", "pycore_ceval.h", "ceval.c", "cpython/abstract.h"}
)

// hides reports whether memory_viz hides frames of this function name (or
// file name, with file), cached by the string's identity.
func (r *Reader) hides(s string, file bool) bool {
	key := strKey{unsafe.StringData(s), len(s), file}
	if h, ok := r.hidden[key]; ok {
		return h
	}
	omit := omitFunctions
	if file {
		omit = omitFilenames
	}
	h := false
	for _, o := range omit {
		if strings.Contains(s, o) {
			h = true
			break
		}
	}
	r.hidden[key] = h
	return h
}

func sortedKeys(m map[uint64]live) []uint64 {
	keys := make([]uint64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The typed accessors name the place and what was found.

func asList(v any, where string) ([]any, error) {
	switch l := v.(type) {
	case []any:
		return l, nil
	case ogorek.Tuple:
		return l, nil
	}
	return nil, &Error{Where: where, Err: fmt.Errorf("want a list, got %s", typeName(v))}
}

func asDict(v any, where string) (map[any]any, error) {
	if d, ok := v.(map[any]any); ok {
		return d, nil
	}
	return nil, &Error{Where: where, Err: fmt.Errorf("want a dict, got %s", typeName(v))}
}

func field(d map[any]any, key, where string) (any, error) {
	v, ok := d[key]
	if !ok {
		return nil, &Error{Where: where, Err: fmt.Errorf("missing %q", key)}
	}
	return v, nil
}

func strField(d map[any]any, key, where string) (string, error) {
	v, err := field(d, key, where)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", &Error{Where: where + "." + key, Err: fmt.Errorf("want a string, got %s", typeName(v))}
	}
	return s, nil
}

func intField(d map[any]any, key, where string) (int64, error) {
	v, err := field(d, key, where)
	if err != nil {
		return 0, err
	}
	switch n := v.(type) {
	case int64:
		return n, nil
	case *big.Int:
		if n.IsInt64() {
			return n.Int64(), nil
		}
	}
	return 0, &Error{Where: where + "." + key, Err: fmt.Errorf("want a 64-bit integer, got %s", typeName(v))}
}

func uintField(d map[any]any, key, where string) (uint64, error) {
	v, err := field(d, key, where)
	if err != nil {
		return 0, err
	}
	switch n := v.(type) {
	case int64:
		if n >= 0 {
			return uint64(n), nil
		}
	case *big.Int:
		if n.Sign() >= 0 && n.IsUint64() {
			return n.Uint64(), nil
		}
	}
	return 0, &Error{Where: where + "." + key, Err: fmt.Errorf("want a non-negative integer below 2^64, got %s", typeName(v))}
}

// typeName names a decoded value's Python type, with the value where it
// is short.
func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing"
	case ogorek.None:
		return "None"
	case bool:
		return "bool " + strconv.FormatBool(x)
	case int64:
		return "int " + strconv.FormatInt(x, 10)
	case *big.Int:
		s := x.String()
		if len(s) > 24 {
			s = s[:24] + "..."
		}
		return "int " + s
	case float64:
		return "float"
	case string:
		if len(x) > 24 {
			return strconv.Quote(x[:24]) + "... (str)"
		}
		return "str " + strconv.Quote(x)
	case []any:
		return "a list"
	case ogorek.Tuple:
		return "a tuple"
	case map[any]any:
		return "a dict"
	case ogorek.Bytes, ogorek.ByteString:
		return "bytes"
	}
	return fmt.Sprintf("%T", v)
}
