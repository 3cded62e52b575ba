package torchsnap

import (
	"errors"
	"fmt"
	"math"
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
	mapped []span             // expandable segments' mapped ranges then, by address
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

	settings    Settings // allocator_settings, where hasSettings
	hasSettings bool

	stacks     []stackRec       // distinct stacks: what an entry's, block's or segment's frames come to
	stackN     map[string]int32 // stacks by site and frames
	names      map[int64]string // Python frames' functions, by frame
	annots     []Annotation     // external_annotations
	keepStacks bool             // Limits.Stacks: else a stack is its site alone
	keyBuf     []byte
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
	aSegmentMap   // expandable segments: pages mapped
	aSegmentUnmap // and unmapped
	aOther        // snapshot, annotate: no change of state
	aOOM          // oom: no change of state, kept for Reader.OOMs
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
	py, fallback int64   // frames (frameOf): the innermost Python one, the innermost shown one
	stack        []int64 // its Python frames, innermost first, at most maxStack
}

// maxStack bounds the Python frames a stack keeps.
const maxStack = 32

// noFrame is a framesState's frame before there is one.
const noFrame = math.MinInt64

func newShaper(lim Limits) *shaper {
	return &shaper{
		segs: make(map[uint64]live), live: make(map[uint64]live),
		frameN: make(map[frameKey]int32), siteN: make(map[frameKey]int32),
		fileN: make(map[string]int32), maxSites: lim.MaxSites, keepStacks: lim.Stacks,
		stackN: make(map[string]int32), names: make(map[int64]string),
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
		case "allocator_settings":
			return 2
		case "external_annotations":
			return 3
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
		case "is_expandable":
			return 4
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
	case rAnnot:
		switch key {
		case "stage":
			return 0
		case "name":
			return 1
		case "time_us":
			return 2
		}
	case rSettings:
		switch key {
		case "PYTORCH_CUDA_ALLOC_CONF":
			return 0
		case "max_split_size":
			return 1
		case "expandable_segments":
			return 2
		case "garbage_collection_threshold":
			return 3
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
		file, _, shown := sh.frame(v.i)
		if sh.keepStacks && shown && sh.files[file].py && len(fr.stack) < maxStack {
			fr.stack = append(fr.stack, v.i)
		}
		if fr.py != noFrame {
			break
		}
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
	case rSettings:
		return val{k: kRead, i: int64(rSettings)}, sh.finishSettings(o, pl)
	case rAnnot:
		return val{k: kRead, i: int64(rAnnot)}, sh.finishAnnotation(o, pl)
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
		var frames []int64
		if o.x != nil {
			frames = o.x.fr.stack
			o.x.fr.stack = nil
		}
		st, err := sh.stackOf(site, frames, pl)
		return val{k: kSite, i: int64(st)}, err
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
