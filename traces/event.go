package traces

import (
	"strconv"
)

// Op is the operation an event records. The zero Op is invalid.
type Op uint8

// The operations of format version 1, grouped by layer.
const (
	OpInvalid Op = iota

	// Layer 1: raw heap.
	OpMalloc
	OpFree
	OpRealloc
	OpRead
	OpWrite

	// Layer 2: managed objects.
	OpScopeEnter
	OpScopeExit
	OpAlloc
	OpStructInit
	OpAcquire
	OpRelease
	OpRegister
	OpUnregister
	OpParamRegister
	OpParamRelease
	OpEnd

	// Layer 3: arena frames.
	OpFnEnter
	OpFnExit
	OpArenaGet

	// Layer 4: device memory and the pool.
	OpDevMalloc
	OpDevFree
	OpPoolGet
	OpPoolPut

	opCount // number of ops, invalid included
)

var opNames = [opCount]string{
	OpInvalid:       "invalid",
	OpMalloc:        "malloc",
	OpFree:          "free",
	OpRealloc:       "realloc",
	OpRead:          "read",
	OpWrite:         "write",
	OpScopeEnter:    "scope_enter",
	OpScopeExit:     "scope_exit",
	OpAlloc:         "alloc",
	OpStructInit:    "struct_init",
	OpAcquire:       "acquire",
	OpRelease:       "release",
	OpRegister:      "register",
	OpUnregister:    "unregister",
	OpParamRegister: "param_register",
	OpParamRelease:  "param_release",
	OpEnd:           "end",
	OpFnEnter:       "fn_enter",
	OpFnExit:        "fn_exit",
	OpArenaGet:      "arena_get",
	OpDevMalloc:     "dev_malloc",
	OpDevFree:       "dev_free",
	OpPoolGet:       "pool_get",
	OpPoolPut:       "pool_put",
}

// String returns the op's name as written in a trace ("scope_enter").
func (op Op) String() string {
	if op < opCount {
		return opNames[op]
	}
	return "op(" + strconv.Itoa(int(op)) + ")"
}

// Ops returns every valid op in declaration order.
func Ops() []Op {
	ops := make([]Op, 0, opCount-1)
	for op := OpInvalid + 1; op < opCount; op++ {
		ops = append(ops, op)
	}
	return ops
}

// ParseOp returns the op named s, or false if s names none.
func ParseOp(s string) (Op, bool) {
	for op := OpInvalid + 1; op < opCount; op++ {
		if opNames[op] == s {
			return op, true
		}
	}
	return OpInvalid, false
}

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
	Op      Op
	Addr    Addr   // addr: the object, block, buffer or segment acted on
	NewAddr Addr   // new_addr: realloc's new block
	Size    uint64 // size in bytes
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
