package torchsnap

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Frame is one Python frame of a stack.
type Frame struct {
	File string
	Line int64
	Name string // the function
}

// stackRec is a distinct stack: its site and its Python frames
// (frameOf's ids, innermost first). Entries, blocks and segments keep
// the index of theirs.
type stackRec struct {
	site   int32 // an index of sites, or -1
	frames []int64
}

// stackOf returns the index of the stack of a frames list whose site is
// site and whose Python frames are frames, made once for each distinct
// one; -1 for a list with neither. Its bytes count toward Limits.MaxSites.
func (sh *shaper) stackOf(site int32, frames []int64, pl place) (int32, error) {
	if site < 0 && len(frames) == 0 {
		return -1, nil
	}
	key := binary.LittleEndian.AppendUint32(sh.keyBuf[:0], uint32(site))
	for _, f := range frames {
		key = binary.LittleEndian.AppendUint64(key, uint64(f))
	}
	sh.keyBuf = key
	if i, ok := sh.stackN[string(key)]; ok {
		return i, nil
	}
	sh.siteBytes += int64(2 * len(key))
	if sh.siteBytes > sh.maxSites {
		return 0, &Error{Where: pl.String(), Err: fmt.Errorf("the snapshot's distinct sites and stacks take more than %d bytes, the most tlcheck holds (Limits.MaxSites)", sh.maxSites)}
	}
	i := int32(len(sh.stacks))
	sh.stacks = append(sh.stacks, stackRec{site: site, frames: frames})
	sh.stackN[string(key)] = i
	return i, nil
}

// nameFrame keeps the function name of a shown Python frame, once.
func (sh *shaper) nameFrame(id int64, name string) {
	if _, ok := sh.names[id]; ok {
		return
	}
	name = strings.Clone(name)
	sh.siteBytes += int64(len(name)) + 16
	sh.names[id] = name
}

// Stack returns the Python frames, innermost first (at most 32), of what
// made event n (as Next numbers events): its trace entry, or for what was
// live before the trace began its block or segment in the snapshot; nil
// where it had none, or where the reader was made without Limits.Stacks.
// The site of the event is its first frame's, where it has Python frames.
func (r *Reader) Stack(n int) []Frame {
	var st int32 = -1
	switch {
	case n < 0:
	case n < len(r.prelude):
		st = r.preludeStack[n]
	case n-len(r.prelude) < len(r.order):
		st = r.sh.ents[r.order[n-len(r.prelude)]].site
	}
	return r.sh.stack(st)
}

// stack returns a stack's Python frames; nil for none.
func (sh *shaper) stack(st int32) []Frame {
	if st < 0 {
		return nil
	}
	ids := sh.stacks[st].frames
	if len(ids) == 0 {
		return nil
	}
	out := make([]Frame, len(ids))
	for i, id := range ids {
		file, line, _ := sh.frame(id)
		out[i] = Frame{File: sh.files[file].name, Line: line, Name: sh.names[id]}
	}
	return out
}
