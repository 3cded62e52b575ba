package torchsnap

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The actions a Writer writes.
const (
	ActionAlloc         = "alloc"
	ActionFreeRequested = "free_requested"
	ActionFreeCompleted = "free_completed"
	ActionSegmentAlloc  = "segment_alloc"
	ActionSegmentFree   = "segment_free"
	ActionSegmentMap    = "segment_map"   // an expandable segment's pages mapped
	ActionSegmentUnmap  = "segment_unmap" // and unmapped
)

// Entry is one trace entry to write.
type Entry struct {
	Action string
	Addr   uint64
	Size   uint64
	Site   string // "file:line" or "", written as the entry's one frame
	TimeUS int64  // written where not 0
}

// Segment is a segment live at the end, with its live blocks.
type Segment struct {
	Addr, Size uint64
	Site       string
	Blocks     []Block // allocated blocks inside it, in any order
	// Expandable: a contiguous mapped range of an expandable segment,
	// which PyTorch reports as a segment of its own.
	Expandable bool
}

// Block is an allocated block.
type Block struct {
	Addr, Size uint64
	Site       string
}

// maxAppends is how many items one APPENDS carries, as Python's pickle
// batches them: memory_viz's unpickler spreads them into a JavaScript
// call, whose arguments are limited.
const maxAppends = 1000

// maxMemo bounds the strings the writer memoizes, so that its memory stays
// bounded whatever the sites.
const maxMemo = 1 << 16

// Writer writes a snapshot for one device. Write the trace's entries in
// order, then Close with the segments live at the end.
type Writer struct {
	w       *bufio.Writer
	err     error
	started bool
	batch   int               // items since the last MARK of the trace list
	memo    map[string]uint32 // strings memoized, by what was asked for
	nmemo   uint32            // the pickle's memo entries so far
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), memo: make(map[string]uint32)}
}

// start writes what comes before the first entry: the top dict, and the
// device_traces list with device 0's list open.
func (w *Writer) start() {
	if w.started {
		return
	}
	w.started = true
	w.op(0x80, 4)  // PROTO 4
	w.op('}', '(') // EMPTY_DICT, MARK (the top dict's items)
	w.str("device_traces")
	w.op(']', ']') // the list of devices, device 0's trace
	w.op('(')      // MARK: the first batch of entries
}

// Write writes one trace entry.
func (w *Writer) Write(e Entry) error {
	if w.err != nil {
		return w.err
	}
	w.start()
	if w.batch == maxAppends {
		w.op('e', '(') // APPENDS, and MARK the next batch
		w.batch = 0
	}
	w.op('}', '(')
	w.str("action")
	w.str(e.Action)
	w.str("addr")
	w.uint(e.Addr)
	w.str("size")
	w.uint(e.Size)
	w.str("stream")
	w.int(0)
	w.str("frames")
	w.frames(e.Site)
	if e.TimeUS != 0 {
		w.str("time_us")
		w.int(e.TimeUS)
	}
	w.op('u') // SETITEMS
	w.batch++
	return w.err
}

// Close writes the segments live at the end and ends the pickle.
func (w *Writer) Close(segs []Segment) error {
	if w.err != nil {
		return w.err
	}
	w.start()
	w.op('e', 'a') // APPENDS the last batch; APPEND device 0's trace to device_traces
	w.str("segments")
	w.op(']')
	slices.SortFunc(segs, func(a, b Segment) int { return cmpUint(a.Addr, b.Addr) })
	for i, s := range segs {
		if i%maxAppends == 0 {
			if i > 0 {
				w.op('e')
			}
			w.op('(')
		}
		w.segment(s)
	}
	if len(segs) > 0 {
		w.op('e')
	}
	w.op('u', '.') // SETITEMS of the top dict, STOP
	if w.err == nil {
		w.err = w.w.Flush()
	}
	return w.err
}

// segment writes one segment, its blocks tiling it: the allocated ones,
// and inactive ones for the gaps.
func (w *Writer) segment(s Segment) {
	blocks := slices.Clone(s.Blocks)
	slices.SortFunc(blocks, func(a, b Block) int { return cmpUint(a.Addr, b.Addr) })
	var allocated uint64
	for _, b := range blocks {
		allocated += b.Size
	}
	w.op('}', '(')
	w.str("device")
	w.int(0)
	w.str("address")
	w.uint(s.Addr)
	w.str("total_size")
	w.uint(s.Size)
	w.str("allocated_size")
	w.uint(allocated)
	w.str("active_size")
	w.uint(allocated)
	w.str("requested_size")
	w.uint(allocated)
	w.str("stream")
	w.int(0)
	w.str("segment_type")
	if s.Size <= 2<<20 {
		w.str("small")
	} else {
		w.str("large")
	}
	w.str("segment_pool_id")
	w.int(0)
	w.int(0)
	w.op(0x86) // TUPLE2
	w.str("is_expandable")
	if s.Expandable {
		w.op(0x88) // NEWTRUE
	} else {
		w.op(0x89) // NEWFALSE
	}
	w.str("frames")
	w.frames(s.Site)
	w.str("blocks")
	w.op(']')
	n := 0
	item := func() {
		if n%maxAppends == 0 {
			if n > 0 {
				w.op('e')
			}
			w.op('(')
		}
		n++
	}
	at, end := s.Addr, s.Addr+s.Size
	for _, b := range blocks {
		if b.Addr < at || b.Addr >= end {
			continue // not inside the segment, or overlapping the last: not drawable
		}
		if b.Addr > at {
			item()
			w.block(at, b.Addr-at, "inactive", "")
		}
		size := min(b.Size, end-b.Addr)
		item()
		w.block(b.Addr, size, "active_allocated", b.Site)
		at = b.Addr + size
	}
	if at < end {
		item()
		w.block(at, end-at, "inactive", "")
	}
	if n > 0 {
		w.op('e')
	}
	w.op('u')
}

func (w *Writer) block(addr, size uint64, state, site string) {
	w.op('}', '(')
	w.str("address")
	w.uint(addr)
	w.str("size")
	w.uint(size)
	w.str("requested_size")
	w.uint(size)
	w.str("state")
	w.str(state)
	w.str("frames")
	w.frames(site)
	w.op('u')
}

// frames writes a site as a list of one frame, or an empty list.
func (w *Writer) frames(site string) {
	w.op(']')
	if site == "" {
		return
	}
	file, line := splitSite(site)
	w.op('}', '(')
	w.str("filename")
	w.str(file)
	w.str("line")
	w.int(line)
	w.str("name")
	w.str("")
	w.op('u', 'a')
}

// splitSite splits "file:line" at its last colon where a positive line
// follows; any other site is a filename with line 0.
func splitSite(site string) (string, int64) {
	if i := strings.LastIndexByte(site, ':'); i > 0 {
		if n, err := strconv.ParseInt(site[i+1:], 10, 64); err == nil && n > 0 && site[i+1] != '+' {
			return site[:i], n
		}
	}
	return site, 0
}

func (w *Writer) op(ops ...byte) {
	if w.err == nil {
		_, w.err = w.w.Write(ops)
	}
}

// str writes a string, memoized: the keys and actions repeat in every
// entry, and Python's pickle memoizes them too.
func (w *Writer) str(s string) {
	if idx, ok := w.memo[s]; ok {
		if idx < 256 {
			w.op('h', byte(idx)) // BINGET
		} else {
			var b [5]byte
			b[0] = 'j' // LONG_BINGET
			binary.LittleEndian.PutUint32(b[1:], idx)
			w.op(b[:]...)
		}
		return
	}
	orig := s
	s = strings.ToValidUTF8(s, "\uFFFD") // Python decodes the bytes as UTF-8
	if len(s) < 256 {
		w.op(0x8c, byte(len(s))) // SHORT_BINUNICODE
	} else {
		var b [5]byte
		b[0] = 'X' // BINUNICODE
		binary.LittleEndian.PutUint32(b[1:], uint32(len(s)))
		w.op(b[:]...)
	}
	if w.err == nil {
		_, w.err = w.w.WriteString(s)
	}
	if len(w.memo) < maxMemo {
		w.memo[orig] = w.nmemo
		w.nmemo++
		w.op(0x94) // MEMOIZE
	}
}

// uint writes an unsigned integer; memory_viz reads integers of at most 8
// bytes, two's complement, so one of 2^63 or more cannot be written.
func (w *Writer) uint(v uint64) {
	if v > math.MaxInt64 {
		if w.err == nil {
			w.err = fmt.Errorf("%#x does not fit the 8-byte signed integers memory_viz reads", v)
		}
		return
	}
	w.int(int64(v))
}

// int writes an integer in the shortest form memory_viz reads.
func (w *Writer) int(v int64) {
	switch {
	case v >= 0 && v < 1<<8:
		w.op('K', byte(v)) // BININT1
	case v >= 0 && v < 1<<16:
		w.op('M', byte(v), byte(v>>8)) // BININT2
	case v >= math.MinInt32 && v <= math.MaxInt32:
		var b [5]byte
		b[0] = 'J' // BININT
		binary.LittleEndian.PutUint32(b[1:], uint32(int32(v)))
		w.op(b[:]...)
	default:
		// LONG1: little-endian two's complement, as few bytes as keep
		// the sign.
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		n := 8
		for n > 1 {
			top, next := b[n-1], b[n-2]
			if (top == 0 && next < 0x80) || (top == 0xff && next >= 0x80) {
				n--
				continue
			}
			break
		}
		w.op(0x8a, byte(n))
		w.op(b[:n]...)
	}
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
