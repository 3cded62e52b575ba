package torchsnap

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"unsafe"
)

// The shape of a snapshot, as the machine reads it. Each container gets,
// when it is made, the role of its place: the place is read off the
// stack (the container below it, and the key before it), as Python's
// pickler writes every container whole before the one that holds it:
//
//	top       {segments: segments, device_traces: traces, ...}
//	segments  [segment, ...]     segment {address, total_size, blocks, frames, ...}
//	blocks    [block, ...]       block   {address, size, state, frames, ...}
//	traces    [trace, ...]       trace   [entry, ...]
//	entry     {action, addr, size, stream, time_us, frames, ...}
//	frames    [frame, ...]       frame   {filename, line, name, ...}
//	settings  {PYTORCH_CUDA_ALLOC_CONF, max_split_size, expandable_segments, garbage_collection_threshold, ...}
//	annots    [annot, ...]       annot   {stage, name, time_us, ...} (external_annotations)
//
// A container in a place the format ignores (a key tlcheck does not read) holds nothing (kSkip). A container whose place
// cannot be told (made on its own and fetched from the memo later) holds
// its items (rGeneric) until it is read in a place. When a container is
// read in its place (appended to its list, set in its dict), what tlcheck
// needs of it is kept, and the memo, which would otherwise hold the
// container to the end, holds that instead.

type role uint8

const (
	rGeneric role = iota
	rSkip
	rTop
	rSegments
	rSegment
	rBlocks
	rBlock
	rTraces
	rTrace
	rEntry
	rFrames
	rFrame
	rSettings // allocator_settings: the PYTORCH_CUDA_ALLOC_CONF in force
	rAnnots   // external_annotations
	rAnnot    // an annotation: {stage, name, time_us}
)

var roleNames = [...]string{
	rGeneric: "a value", rSkip: "a value", rTop: "the snapshot",
	rSegments: "the segments", rSegment: "a segment", rBlocks: "a segment's blocks", rBlock: "a block",
	rTraces: "device_traces", rTrace: "a device's trace", rEntry: "a trace entry",
	rFrames: "a frames list", rFrame: "a frame", rSettings: "allocator_settings",
	rAnnots: "external_annotations", rAnnot: "an annotation",
}

// isDict reports whether a role's containers are dicts (else lists).
func (r role) isDict() bool {
	return r == rTop || r == rSegment || r == rBlock || r == rEntry || r == rFrame || r == rSettings || r == rAnnot
}

// child returns the role of a value at key (a dict's) in a container of
// role r.
func (r role) child(key string) role {
	switch r {
	case rGeneric:
		return rGeneric
	case rTop:
		switch key {
		case "segments":
			return rSegments
		case "device_traces":
			return rTraces
		case "allocator_settings":
			return rSettings
		case "external_annotations":
			return rAnnots
		}
	case rAnnots:
		return rAnnot
	case rSegments:
		return rSegment
	case rSegment, rBlock, rEntry:
		switch {
		case key == "frames":
			return rFrames
		case key == "blocks" && r == rSegment:
			return rBlocks
		}
	case rBlocks:
		return rBlock
	case rTraces:
		return rTrace
	case rTrace:
		return rEntry
	case rFrames:
		return rFrame
	}
	return rSkip
}

// fits reports whether a container of kind k ('l', 'd', 't') can have
// role r.
func (r role) fits(k byte) bool {
	if r == rGeneric || r == rSkip {
		return true
	}
	return r.isDict() == (k == 'd')
}

// The fields of each dict role that tlcheck reads, by index in obj.f.
var fieldIndex = map[role]map[string]int{
	rTop:     {"segments": 0, "device_traces": 1, "allocator_settings": 2, "external_annotations": 3},
	rSegment: {"address": 0, "total_size": 1, "blocks": 2, "frames": 3, "is_expandable": 4},
	rBlock:   {"address": 0, "size": 1, "state": 2, "frames": 3},
	rEntry:   {"action": 0, "addr": 1, "size": 2, "stream": 3, "time_us": 4, "frames": 5},
	rFrame:   {"filename": 0, "line": 1, "name": 2},
	rSettings: {"PYTORCH_CUDA_ALLOC_CONF": 0, "max_split_size": 1, "expandable_segments": 2,
		"garbage_collection_threshold": 3},
	rAnnot: {"stage": 0, "name": 1, "time_us": 2},
}

// obj is a container the machine holds. It is kept small (a snapshot
// makes one for each entry, frames list and frame): what only lists and
// containers of unknown place need is in x.
type obj struct {
	kind       byte  // 'l', 'd' or 't'
	set        uint8 // which fields are set
	role       role
	readAs     role // the role it was read as, once sealed
	unhashable bool // a tuple that holds an unhashable value
	sealed     bool // read in its place: it may not change after
	n          int32
	memo       int64
	at         int64 // the byte offset where it was made
	read       val   // what was read of it, once sealed
	pl         place // where it was made, if that could be told
	f          [4]val
	x          *objExt
}

// objExt is what an obj holds beyond a dict of four fields.
type objExt struct {
	more  [2]val      // a trace entry's fifth and sixth fields
	ints  []int32     // a trace's entries, a segment's blocks
	items []val       // a generic container's items (keys and values, a dict's)
	fr    framesState // a frames list's site so far
}

func (o *obj) ext() *objExt {
	if o.x == nil {
		o.x = &objExt{fr: framesState{py: noFrame, fallback: noFrame}}
	}
	return o.x
}

// field returns field i, which must be set.
func (o *obj) field(i int) val {
	if i < len(o.f) {
		return o.f[i]
	}
	return o.x.more[i-len(o.f)]
}

func (o *obj) setField(i int, v val) {
	if i < len(o.f) {
		o.f[i] = v
	} else {
		o.ext().more[i-len(o.f)] = v
	}
	o.set |= 1 << i
}

// place is where a value stands: its container and its key or index.
// It is made into words only for an error.
type place struct {
	o     *obj
	key   string
	index int
	at    int64  // the byte offset, where there is no container
	field string // a field of the value there, for an error about it
}

func (p place) String() string {
	if p.field != "" {
		f := p.field
		p.field = ""
		return p.String() + "." + f
	}
	if p.o == nil {
		return fmt.Sprintf("the value at byte %d", p.at)
	}
	base := p.o.pl.String()
	switch {
	case p.o.role == rTop:
		base = ""
	case p.o.pl.o == nil && p.o.role != rGeneric:
		base = roleNames[p.o.role] + fmt.Sprintf(" at byte %d", p.o.at)
	}
	if p.o.kind == 'd' {
		if base == "" {
			return p.key
		}
		return base + "." + p.key
	}
	return base + "[" + strconv.Itoa(p.index) + "]"
}

// where names the place of o.
func (o *obj) where() string {
	switch {
	case o.role == rTop:
		return "snapshot"
	case o.pl.o == nil && o.role != rGeneric:
		return roleNames[o.role] + fmt.Sprintf(" at byte %d", o.at)
	case o.pl.o == nil:
		return fmt.Sprintf("the %s at byte %d", kindName(o.kind)[2:], o.at)
	}
	return o.pl.String()
}

// fieldOf returns the place of the value's field key.
func (p place) fieldOf(key string) place {
	p.field = key
	return p
}

// newContainer makes an empty container of kind k, in the role of its
// place on the stack.
func (m *machine) newContainer(k byte) (val, error) {
	if m.sh == nil {
		return m.newObj(k, rGeneric, place{at: m.at}), nil
	}
	parent, pl, ok := m.placeHere(k)
	if !ok {
		if len(m.stack) == 0 && k == 'd' && m.sh.top == nil {
			v := m.newObj(k, rTop, place{})
			m.sh.top = v.obj()
			return v, nil
		}
		return m.newObj(k, rGeneric, place{at: m.at}), nil
	}
	if parent.k == kSkip {
		return val{k: kSkip, i: int64(k)}, nil
	}
	r := parent.obj().role.child(pl.key)
	switch {
	case r == rSkip:
		return val{k: kSkip, i: int64(k)}, nil
	case !r.fits(k):
		r = rGeneric
	}
	v := m.newObj(k, r, pl)
	// One top dict holds one segments list and one device_traces list:
	// their items are read as they come, so a second would mix with the
	// first.
	switch r {
	case rSegments, rTraces:
		first := &m.sh.segsObj
		if r == rTraces {
			first = &m.sh.traceList
		}
		if *first != nil {
			return val{}, &Error{Where: pl.String(), Err: errors.New("a second list in this place: PyTorch never writes such a snapshot")}
		}
		*first = v.obj()
	}
	return v, nil
}

func (m *machine) newObj(k byte, r role, pl place) val {
	o := &obj{kind: k, role: r, at: m.at, pl: pl}
	return val{k: kObj, p: unsafe.Pointer(o)}
}

// placeHere tells the place of a container of kind k about to be pushed:
// an item of the list just below it (a batch of one, APPEND), the value
// of the key just below it (SETITEM), or an item after the last MARK of
// the container below that mark (APPENDS, SETITEMS).
func (m *machine) placeHere(k byte) (parent val, pl place, ok bool) {
	s, i := m.stack, len(m.stack)
	isCont := func(v val) bool {
		return v.k == kObj || v.k == kSkip
	}
	kindOf := func(v val) byte {
		if v.k == kObj {
			return v.obj().kind
		}
		return byte(v.i)
	}
	fence := m.fence()
	if i >= 1 && fence <= i-1 && isCont(s[i-1]) && kindOf(s[i-1]) == 'l' {
		p := s[i-1]
		if p.k == kSkip || p.obj().role.child("").fits(k) {
			return p, m.placeIn(p, "", 0), true
		}
	}
	if i >= 2 && fence <= i-2 && s[i-1].k == kStr && isCont(s[i-2]) && kindOf(s[i-2]) == 'd' {
		// In a dict's batch (MARK ... SETITEMS), a dict at a value's
		// place and a key after it are either that dict being filled
		// (SETITEM) or the batch's next key: a key the batch's dict
		// reads (external_annotations after allocator_settings) is the
		// batch's.
		if b := fence - 1; b >= 0 && (i-2-fence)%2 == 1 && s[b].k == kObj && kindOf(s[b]) == 'd' &&
			s[b].obj().role.child(s[i-1].str()) != rSkip {
			return s[b], m.placeIn(s[b], s[i-1].str(), 0), true
		}
		return s[i-2], m.placeIn(s[i-2], s[i-1].str(), 0), true
	}
	if fence >= 1 && len(m.marks) > 0 && isCont(s[fence-1]) {
		p, j := s[fence-1], i-fence
		switch kindOf(p) {
		case 'l':
			return p, m.placeIn(p, "", j), true
		case 'd':
			if j%2 == 1 && s[i-1].k == kStr {
				return p, m.placeIn(p, s[i-1].str(), 0), true
			}
		}
	}
	return val{}, place{}, false
}

func (m *machine) placeIn(p val, key string, pending int) place {
	if p.k != kObj {
		return place{at: m.at}
	}
	o := p.obj()
	return place{o: o, key: key, index: int(o.n) + pending}
}

// fill adds items to o: values to a list, or key and value pairs to a
// dict (or a tuple's items, when it is made).
func (m *machine) fill(o *obj, items []val) error {
	if o.sealed {
		return m.fail("a container is changed after tlcheck read it as %s: PyTorch never writes such a snapshot", roleNames[o.readAs])
	}
	if o.kind == 'd' {
		for j := 0; j < len(items); j += 2 {
			if !hashable(items[j]) {
				return &Error{Where: o.where(), Err: fmt.Errorf("a key of this dict is %s, which Python cannot use as a key (it is unhashable)", typeName(items[j]))}
			}
		}
	}
	if o.role == rGeneric {
		m.held += len(items)
		if m.held > m.lim.maxHeld {
			return m.fail("more than %d values outside the places of a snapshot that tlcheck reads: PyTorch never writes such a snapshot", m.lim.maxHeld)
		}
		o.ext().items = append(o.ext().items, items...)
		o.n += int32(len(items))
		return nil
	}
	if o.kind == 'd' {
		return m.sh.setFields(m, o, items)
	}
	for _, it := range items {
		if err := m.sh.addItem(m, o, it); err != nil {
			return err
		}
		o.n++
	}
	return nil
}

// hashable reports whether Python could use v as a dict key.
func hashable(v val) bool {
	switch v.k {
	case kObj:
		o := v.obj()
		return o.kind == 't' && !o.unhashable
	case kSkip:
		return byte(v.i) == 't' && v.i&skipUnhashable == 0
	case kEntry, kFrame, kSite, kRead, kBlock, kTrace:
		return false
	}
	return true
}

func allHashable(items []val) bool {
	for _, v := range items {
		if !hashable(v) {
			return false
		}
	}
	return true
}

// typeName names a value's Python type, with the value where it is short.
func typeName(v val) string {
	switch v.k {
	case kNone:
		return "None"
	case kBool:
		if v.i != 0 {
			return "bool True"
		}
		return "bool False"
	case kInt:
		return "int " + strconv.FormatInt(v.i, 10)
	case kUint:
		return "int " + strconv.FormatUint(uint64(v.i), 10)
	case kBig:
		if v.p != nil {
			s := (*big.Int)(v.p).String()
			if len(s) > 24 {
				s = s[:24] + "..."
			}
			return "int " + s
		}
		return "an integer over 64 bits"
	case kFloat:
		return "float"
	case kStr:
		s := v.str()
		if len(s) > 24 {
			return strconv.Quote(s[:24]) + "... (str)"
		}
		return "str " + strconv.Quote(s)
	case kLong:
		return fmt.Sprintf("a str or bytes of %d bytes", v.i)
	case kBytes:
		return "bytes"
	case kObj:
		return kindName(v.obj().kind)
	case kSkip:
		return kindName(byte(v.i))
	case kEntry, kFrame, kBlock:
		return "a dict"
	case kSite, kTrace:
		return "a list"
	case kRead:
		if role(v.i).isDict() {
			return "a dict"
		}
		return "a list"
	}
	return "a value"
}

func kindName(k byte) string {
	switch k {
	case 'l':
		return "a list"
	case 'd':
		return "a dict"
	}
	return "a tuple"
}
