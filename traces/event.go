package traces

import (
	"strconv"
)

// Addr is an address in one of the trace's address spaces. Zero is NULL.
type Addr uint64

// String formats a in lower-case hex with a 0x prefix, as traces write it.
func (a Addr) String() string {
	return "0x" + strconv.FormatUint(uint64(a), 16)
}

// ParseAddr parses an address written as hex ("0x7f3a10") or as a decimal
// string of a non-negative integer.
func ParseAddr(s string) (Addr, error) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		v, err := strconv.ParseUint(s[2:], 16, 64)
		return Addr(v), err
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return Addr(v), err
}

// Space is an address space. Heap is the default; device addresses are a
// space of their own.
type Space uint8

const (
	SpaceHeap Space = iota
	SpaceDevice
)

// String returns "heap" or "device".
func (s Space) String() string {
	if s == SpaceDevice {
		return "device"
	}
	return "heap"
}

// Event is one event of a trace: a call the runtime made, an access, or (with
// effects) a free it did. Which fields are meaningful depends on Op; the rest
// are zero. The reader fills and checks them; FORMAT.md lists them per op.
type Event struct {
	Op Op
	// HasCount says whether Count was given. The model reads it at every
	// event, so it lies beside Op, in room Op's alignment leaves: the line
	// that holds the position and a malloc's or free's fields is then the
	// only one of an event the model reads (see input's prefetcher), where
	// at the end of the struct it cost every event a line more, written on
	// the reader's core and read on the model's.
	HasCount bool
	Addr     Addr   // addr: the object, block, buffer or segment acted on
	NewAddr  Addr   // new_addr: realloc's new block
	Size     uint64 // size in bytes
	// Site comes before the fields only some ops have, so that a malloc's
	// or a free's fields lie in the event's first 64 bytes.
	Site    string // optional source location, quoted by reports
	HasSize bool   // whether size was given (optional on read and write)
	Kind    string // alloc's kind; "" means "tensor"
	Fields  []Addr // struct_init's fields, NULL entries included
	Name    string // param_register and param_release: the parameter's name
	Slots   int    // fn_enter: slots in the frame
	Slot    int    // arena_get: the slot of the top frame
	Var     string // arena_get, read, write: the variable, "" if none
	Space   Space  // read, write: the address space
	T       int64  // optional timestamp in ns
	Thread  string // optional thread, as written (a JSON string or number)
	Stream  uint64 // record_stream: the stream that now uses the block
	// Count is the object's reference count after the op, as the runtime
	// believes it (optional on the layer-2 ops that name one object);
	// HasCount says whether it was given, 0 being a count.
	Count uint64
}

// Pos is where an event stands in its file: its number (from 0, the header
// not counted) and the 1-based line on which it starts.
type Pos struct {
	Event int
	Line  int
}

// MarshalJSON writes a as a hex string, the form reports use.
func (a Addr) MarshalJSON() ([]byte, error) {
	return []byte(`"` + a.String() + `"`), nil
}

// UnmarshalJSON reads a hex string or a non-negative JSON integer.
func (a *Addr) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
		if len(s) < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
			return &strconv.NumError{Func: "ParseAddr", Num: s, Err: strconv.ErrSyntax}
		}
	}
	v, err := ParseAddr(s)
	if err != nil {
		return err
	}
	*a = v
	return nil
}
