package torchsnap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"
)

// shaper keeps what tlcheck reads of a snapshot, as the machine reads it.
type shaper struct {
	top                *obj
	segsObj, traceList *obj // the segments and device_traces lists

	ents     []entry   // every trace entry read, once each
	traces   [][]int32 // each device's trace read: indexes of ents
	devOrder []int32   // device_traces' items, as indexes of traces

	blocks []blockRec         // every block read
	segs   map[uint64]live    // segments live at the snapshot
	live   map[uint64]live    // blocks allocated at the snapshot
	frames []frameRec         // distinct frames
	frameN map[frameKey]int32 // frames by file, line and whether shown
	files  []fileRec          // distinct filenames
	fileN  map[string]int32

	sites     []string
	siteN     map[frameKey]int32 // sites by file and line
	siteBytes int64
	maxSites  int64

	stats Stats
}

// entry is one trace entry, as far as the events need it.
type entry struct {
	addr, size uint64
	t          int64 // ns; 0 if none
	stream     int64
	site       int32 // an index of sites, or -1
	action     action
}

type action uint8

const (
	aAlloc action = iota
	aFreeRequested
	aFreeCompleted
	aSegmentAlloc
	aSegmentFree
	aOther // oom, snapshot, annotate: no change of state
)

// live is a segment or block live at some point, with where it was made.
type live struct {
	size uint64
	site int32
}

type blockRec struct {
	addr, size uint64
	site       int32
	hasAddr    bool
	active     bool
}

// frameRec is a distinct frame, as far as its site goes.
type frameRec struct {
	file  int32 // an index of files
	line  int64
	shown bool // memory_viz shows it, and it names a file
}

type fileRec struct {
	name string
	py   bool // a Python file
}

type frameKey struct {
	file  int32
	line  int64
	shown bool
}

// framesState is what a frames list has shown of its site so far.
type framesState struct {
	py, fallback int64 // frames (frameOf): the innermost Python one, the innermost shown one
}

// noFrame is a framesState's frame before there is one.
const noFrame = math.MinInt64

func newShaper(lim Limits) *shaper {
	return &shaper{
		segs: make(map[uint64]live), live: make(map[uint64]live),
		frameN: make(map[frameKey]int32), siteN: make(map[frameKey]int32),
		fileN: make(map[string]int32), maxSites: lim.MaxSites,
	}
}

// fieldOf returns the index in obj.f of a dict role's field, or -1 for a
// field tlcheck does not read.
func fieldOf(r role, key string) int {
	switch r {
	case rTop:
		switch key {
		case "segments":
			return 0
		case "device_traces":
			return 1
		}
	case rSegment:
		switch key {
		case "address":
			return 0
		case "total_size":
			return 1
		case "blocks":
			return 2
		case "frames":
			return 3
		}
	case rBlock:
		switch key {
		case "address":
			return 0
		case "size":
			return 1
		case "state":
			return 2
		case "frames":
			return 3
		}
	case rEntry:
		switch key {
		case "action":
			return 0
		case "addr":
			return 1
		case "size":
			return 2
		case "stream":
			return 3
		case "time_us":
			return 4
		case "frames":
			return 5
		}
	case rFrame:
		switch key {
		case "filename":
			return 0
		case "line":
			return 1
		case "name":
			return 2
		}
	}
	return -1
}

// setFields sets key and value pairs in a dict of a known role.
func (sh *shaper) setFields(m *machine, o *obj, items []val) error {
	for j := 0; j < len(items); j += 2 {
		k, v := items[j], items[j+1]
		if k.k != kStr {
			continue
		}
		key := k.str()
		f := fieldOf(o.role, key)
		if f < 0 {
			continue
		}
		pl := place{o: o, key: key}
		if o.set&(1<<f) != 0 {
			return &Error{Where: pl.String(), Err: errors.New("the key is set twice: PyTorch never writes such a snapshot")}
		}
		if c := o.role.child(key); c != rSkip {
			var err error
			if v, err = m.readAs(v, c, pl); err != nil {
				return err
			}
		}
		o.setField(f, v)
	}
	return nil
}

// addItem adds an item to a list of a known role.
func (sh *shaper) addItem(m *machine, o *obj, it val) error {
	v, err := m.readAs(it, o.role.child(""), place{o: o, index: int(o.n)})
	if err != nil {
		return err
	}
	switch o.role {
	case rBlocks, rTrace:
		o.ext().ints = append(o.ext().ints, int32(v.i))
	case rTraces:
		sh.devOrder = append(sh.devOrder, int32(v.i))
	case rFrames:
		fr := &o.ext().fr
		if fr.py != noFrame {
			break
		}
		file, _, shown := sh.frame(v.i)
		switch {
		case !shown:
		case sh.files[file].py:
			fr.py = v.i
		case fr.fallback == noFrame:
			fr.fallback = v.i
		}
	}
	return nil
}

// readAs reads v, at place pl, as a value of role want, and returns what
// tlcheck keeps of it.
func (m *machine) readAs(v val, want role, pl place) (val, error) {
	switch v.k {
	case kObj:
		o := v.obj()
		if o.sealed {
			if o.readAs == want {
				return o.read, nil
			}
			return val{}, mismatch(o, want, pl)
		}
		t := o
		switch {
		case o.role == want:
		case o.role == rGeneric && want.fits(o.kind):
			// A container whose place could not be told when it was
			// made: read its items now. It is sealed first, so that
			// one that holds itself is an error and not a loop.
			o.sealed, o.readAs, o.read = true, want, val{k: kRead, i: int64(want)}
			t = &obj{kind: o.kind, role: want, at: o.at, pl: pl}
			var items []val
			if o.x != nil {
				items, o.x.items = o.x.items, nil
			}
			m.held -= len(items)
			if err := m.fill(t, items); err != nil {
				return val{}, err
			}
		default:
			return val{}, mismatch(o, want, pl)
		}
		if pl.o != nil {
			t.pl = pl
		}
		o.sealed, o.readAs = true, want
		res, err := m.sh.finish(m, t, pl)
		if err != nil {
			return val{}, err
		}
		o.read, t.sealed, t.readAs, t.read = res, true, want, res
		m.reseal(o, res)
		return res, nil
	case kEntry, kFrame, kSite, kBlock, kTrace, kRead:
		if readRole(v) == want {
			return v, nil
		}
		return val{}, &Error{Where: pl.String(), Err: fmt.Errorf("want %s, got %s read already as %s: PyTorch never writes such a snapshot", roleNames[want], typeName(v), roleNames[readRole(v)])}
	case kSkip:
		return val{}, &Error{Where: pl.String(), Err: fmt.Errorf("want %s, got %s first written where a snapshot holds nothing tlcheck reads: PyTorch never writes such a snapshot", roleNames[want], typeName(v))}
	}
	what := "a list"
	if want.isDict() {
		what = "a dict"
	}
	return val{}, &Error{Where: pl.String(), Err: fmt.Errorf("want %s, got %s", what, typeName(v))}
}

func readRole(v val) role {
	switch v.k {
	case kEntry:
		return rEntry
	case kFrame:
		return rFrame
	case kSite:
		return rFrames
	case kBlock:
		return rBlock
	case kTrace:
		return rTrace
	}
	return role(v.i)
}

func mismatch(o *obj, want role, pl place) error {
	got := roleNames[o.role]
	if o.sealed {
		got = roleNames[o.readAs]
	}
	if o.role == rGeneric && !o.sealed {
		got = typeName(val{k: kObj, p: unsafe.Pointer(o)})
	}
	msg := fmt.Sprintf("want %s, got %s", roleNames[want], got)
	if pl.o == o {
		msg += " (a container that holds itself: PyTorch never writes such a snapshot)"
	} else if want.isDict() != (o.kind == 'd') {
		// The plain message says it.
	} else {
		msg += ": PyTorch never writes such a snapshot"
	}
	return &Error{Where: pl.String(), Err: errors.New(msg)}
}

// finish reads a container of a known role, whole, and returns what
// tlcheck keeps of it.
func (sh *shaper) finish(m *machine, o *obj, pl place) (val, error) {
	switch o.role {
	case rEntry:
		return sh.finishEntry(o, pl)
	case rFrame:
		return sh.finishFrame(o, pl)
	case rFrames:
		site := int32(-1)
		id, fb := int64(noFrame), int64(noFrame)
		if o.x != nil {
			id, fb = o.x.fr.py, o.x.fr.fallback
		}
		if id == noFrame {
			id = fb
		}
		if id != noFrame {
			var err error
			if site, err = sh.siteOf(id, pl); err != nil {
				return val{}, err
			}
		}
		return val{k: kSite, i: int64(site)}, nil
	case rBlock:
		return sh.finishBlock(o, pl)
	case rBlocks:
		return val{k: kObj, p: unsafe.Pointer(o)}, nil
	case rSegment:
		return val{k: kRead, i: int64(rSegment)}, sh.finishSegment(o, pl)
	case rTrace:
		var ints []int32
		if o.x != nil {
			ints, o.x.ints = o.x.ints, nil
		}
		sh.traces = append(sh.traces, ints)
		return val{k: kTrace, i: int64(len(sh.traces) - 1)}, nil
	}
	return val{k: kRead, i: int64(o.role)}, nil
}

// The typed accessors name the place and what was found.

func (o *obj) has(f int) bool { return o.set&(1<<f) != 0 }

func field(o *obj, f int, key string, pl place) (val, error) {
	if !o.has(f) {
		return val{}, &Error{Where: pl.String(), Err: fmt.Errorf("missing %q", key)}
	}
	return o.field(f), nil
}

func strField(o *obj, f int, key string, pl place) (string, error) {
	v, err := field(o, f, key, pl)
	if err != nil {
		return "", err
	}
	switch v.k {
	case kStr:
		return v.str(), nil
	case kLong:
		return "", &Error{Where: pl.fieldOf(key).String(), Err: fmt.Errorf("a string of %d bytes, over the limit of strings that tlcheck reads (Limits.MaxString)", v.i)}
	}
	return "", &Error{Where: pl.fieldOf(key).String(), Err: fmt.Errorf("want a string, got %s", typeName(v))}
}

func intField(o *obj, f int, key string, pl place) (int64, error) {
	v, err := field(o, f, key, pl)
	if err != nil {
		return 0, err
	}
	if v.k == kInt {
		return v.i, nil
	}
	return 0, &Error{Where: pl.fieldOf(key).String(), Err: fmt.Errorf("want a 64-bit integer, got %s", typeName(v))}
}

func uintField(o *obj, f int, key string, pl place) (uint64, error) {
	v, err := field(o, f, key, pl)
	if err != nil {
		return 0, err
	}
	switch {
	case v.k == kInt && v.i >= 0:
		return uint64(v.i), nil
	case v.k == kUint:
		return uint64(v.i), nil
	}
	return 0, &Error{Where: pl.fieldOf(key).String(), Err: fmt.Errorf("want a non-negative integer below 2^64, got %s", typeName(v))}
}

// siteField returns the site of a dict's frames, or -1.
func siteField(o *obj, f int) int32 {
	if !o.has(f) {
		return -1
	}
	return int32(o.field(f).i)
}

// wraps reports whether a block of size bytes at addr would pass 2^64
// (one that ends at 2^64 exactly has its last byte at 2^64-1).
func wraps(addr, size uint64) bool {
	end, carry := bits.Add64(addr, size, 0)
	return carry != 0 && end != 0
}

func errWraps(pl place, addr, size uint64) error {
	return &Error{Where: pl.String(), Err: fmt.Errorf("address 0x%x plus size %d passes 2^64", addr, size)}
}

func (sh *shaper) finishEntry(o *obj, pl place) (val, error) {
	e := entry{site: siteField(o, 5)}
	act, err := strField(o, 0, "action", pl)
	if err != nil {
		return val{}, err
	}
	switch act {
	case "alloc", "segment_alloc":
		e.action = aAlloc
		if act == "segment_alloc" {
			e.action = aSegmentAlloc
		}
		if e.size, err = uintField(o, 2, "size", pl); err != nil {
			return val{}, err
		}
		if e.addr, err = uintField(o, 1, "addr", pl); err != nil {
			return val{}, err
		}
	case "free_completed", "segment_free":
		e.action = aFreeCompleted
		if act == "segment_free" {
			e.action = aSegmentFree
		}
		if e.addr, err = uintField(o, 1, "addr", pl); err != nil {
			return val{}, err
		}
		if o.has(2) {
			if e.size, err = uintField(o, 2, "size", pl); err != nil {
				return val{}, err
			}
		}
	case "free_requested":
		e.action = aFreeRequested
	case "oom", "snapshot", "annotate":
		// No change of state: see the package comment.
		e.action = aOther
	case "segment_map", "segment_unmap":
		return val{}, &Error{Where: pl.fieldOf("action").String(), Err: fmt.Errorf("%q: snapshots of expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True) map parts of one reservation, which tlcheck's segments cannot express; record without expandable segments", act)}
	default:
		return val{}, &Error{Where: pl.fieldOf("action").String(), Err: fmt.Errorf("unknown action %q (want alloc, free_requested, free_completed, segment_alloc, segment_free, oom or snapshot)", act)}
	}
	if wraps(e.addr, e.size) {
		return val{}, errWraps(pl, e.addr, e.size)
	}
	if o.has(3) {
		if e.stream, err = intField(o, 3, "stream", pl); err != nil {
			return val{}, err
		}
	}
	if o.has(4) {
		us, err := intField(o, 4, "time_us", pl)
		if err != nil {
			return val{}, err
		}
		if us > 0 && us < 1<<53 {
			e.t = us * 1000
		}
	}
	sh.ents = append(sh.ents, e)
	return val{k: kEntry, i: int64(len(sh.ents) - 1)}, nil
}

func (sh *shaper) finishBlock(o *obj, pl place) (val, error) {
	b := blockRec{site: siteField(o, 3)}
	var err error
	if b.size, err = uintField(o, 1, "size", pl); err != nil {
		return val{}, err
	}
	if o.has(0) {
		if b.addr, err = uintField(o, 0, "address", pl); err != nil {
			return val{}, err
		}
		b.hasAddr = true
	}
	state, err := strField(o, 2, "state", pl)
	if err != nil {
		return val{}, err
	}
	switch state {
	case "active_allocated", "active_pending_free", "active_awaiting_free":
		b.active = true
	case "inactive":
	default:
		return val{}, &Error{Where: pl.fieldOf("state").String(), Err: fmt.Errorf("unknown block state %q (want active_allocated, active_pending_free or inactive)", state)}
	}
	sh.blocks = append(sh.blocks, b)
	return val{k: kBlock, i: int64(len(sh.blocks) - 1)}, nil
}

func (sh *shaper) finishSegment(o *obj, pl place) error {
	addr, err := uintField(o, 0, "address", pl)
	if err != nil {
		return err
	}
	total, err := uintField(o, 1, "total_size", pl)
	if err != nil {
		return err
	}
	if wraps(addr, total) {
		return errWraps(pl, addr, total)
	}
	sh.segs[addr] = live{total, siteField(o, 3)}
	sh.stats.LiveSegments++
	if !o.has(2) {
		return nil
	}
	bl := o.field(2).obj()
	var blocks []int32
	if bl.x != nil {
		blocks = bl.x.ints
	}
	// A block's address is its segment's plus the sizes before it, as
	// memory_viz reckons it; newer snapshots also write it.
	at := addr
	for j, idx := range blocks {
		b := sh.blocks[idx]
		if b.hasAddr {
			at = b.addr
		}
		if wraps(at, b.size) {
			return errWraps(place{o: bl, index: j}, at, b.size)
		}
		if b.active {
			sh.live[at] = live{b.size, b.site}
			sh.stats.LiveBlocks++
		}
		at += b.size
	}
	return nil
}

func (sh *shaper) finishFrame(o *obj, pl place) (val, error) {
	if _, err := strField(o, 0, "filename", pl); err != nil {
		return val{}, err
	}
	file := o.field(0)
	shown := file.i > 0 && file.str() != "??" && !hides(file, true)
	if shown && o.has(2) {
		if _, err := strField(o, 2, "name", pl); err != nil {
			return val{}, err
		}
		shown = !hides(o.field(2), false)
	}
	line := int64(0)
	if o.has(1) {
		var err error
		if line, err = intField(o, 1, "line", pl); err != nil {
			return val{}, err
		}
	}
	return val{k: kFrame, i: sh.frameOf(sh.fileID(file), line, shown)}, nil
}

// frameOf returns a frame's identity, as kFrame's i: its file, whether it
// is shown and its line, packed (file << 33 | shown << 32 | line) where
// the line fits 32 bits, and else, negative, an index of frames, where
// such frames are interned.
func (sh *shaper) frameOf(file int32, line int64, shown bool) int64 {
	if line >= 0 && line < 1<<32 {
		id := int64(file)<<33 | line
		if shown {
			id |= 1 << 32
		}
		return id
	}
	key := frameKey{file, line, shown}
	id, ok := sh.frameN[key]
	if !ok {
		sh.frames = append(sh.frames, frameRec{file: file, line: line, shown: shown})
		id = int32(len(sh.frames) - 1)
		sh.frameN[key] = id
	}
	return -1 - int64(id)
}

// frame unpacks frameOf's identity.
func (sh *shaper) frame(id int64) (file int32, line int64, shown bool) {
	if id < 0 {
		f := &sh.frames[-1-id]
		return f.file, f.line, f.shown
	}
	return int32(id >> 33), id & (1<<32 - 1), id&(1<<32) != 0
}

// fileID returns the index in files of a filename, kept in the string's
// tail once known.
func (sh *shaper) fileID(v val) int32 {
	t := v.tail()
	if id := binary.LittleEndian.Uint32(t[4:]); id != 0 {
		return int32(id - 1)
	}
	s := v.str()
	id, ok := sh.fileN[s]
	if !ok {
		sh.files = append(sh.files, fileRec{name: s, py: strings.HasSuffix(s, ".py")})
		id = int32(len(sh.files) - 1)
		sh.fileN[s] = id
	}
	binary.LittleEndian.PutUint32(t[4:], uint32(id)+1)
	return id
}

// siteOf returns frame id's site, "file:line" ("file" where line is 0),
// made once for each file and line.
func (sh *shaper) siteOf(id int64, pl place) (int32, error) {
	file, line, _ := sh.frame(id)
	key := frameKey{file: file, line: line}
	site, ok := sh.siteN[key]
	if !ok {
		s := sh.files[file].name
		if line > 0 {
			s += ":" + strconv.FormatInt(line, 10)
		}
		sh.siteBytes += int64(len(s))
		if sh.siteBytes > sh.maxSites {
			return 0, &Error{Where: pl.String(), Err: fmt.Errorf("the snapshot's distinct sites (file:line) take more than %d bytes, the most tlcheck holds (Limits.MaxSites)", sh.maxSites)}
		}
		sh.sites = append(sh.sites, s)
		site = int32(len(sh.sites) - 1)
		sh.siteN[key] = site
	}
	return site, nil
}

// omitFunctions and omitFilenames are the frames memory_viz hides (the
// stack unwinder, the interpreter loop, the dispatcher), so that the site
// is the frame a user reads first.
var (
	omitFunctions = []string{"unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp", "_start", "__libc_start_main", "PyEval_", "PyObject_", "PyFunction_"}
	omitFilenames = []string{"core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c", "Objects/call.c", "Objects/methodobject.c", "pycore_ceval.h", "ceval.c", "cpython/abstract.h"}
)

// hides reports whether memory_viz hides frames of this function name
// (or file name, with file), kept in the string's tail once known.
func hides(v val, file bool) bool {
	t := v.tail()
	known, hidden := byte(1), byte(2)
	if file {
		known, hidden = 4, 8
	}
	if t[0]&known != 0 {
		return t[0]&hidden != 0
	}
	omit := omitFunctions
	if file {
		omit = omitFilenames
	}
	s := v.str()
	t[0] |= known
	for _, o := range omit {
		if strings.Contains(s, o) {
			t[0] |= hidden
			return true
		}
	}
	return false
}
