package impl

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// Layer 3: arena frames. A function's tensor temporaries live in slots of
// its frame, as TensorLogic's compiled code keeps them: the planner
// (PlanFrame) decides how many slots a function needs and which variable
// takes which, FnEnter pushes a frame of that many slots, ArenaGet hands
// out a slot's buffer and FnExit drops every buffer of the frame at once.
//
// The buffers come from chunks by bump allocation: a frame remembers where
// the bump pointer stood when it was entered and puts it back when it
// exits, so no buffer is ever freed on its own and no tensor costs a
// malloc. A slot asked for more than its buffer holds gets a new buffer;
// the old one stays valid until FnExit, because a variable may still point
// into it (the use-after-free TensorLogic fixed in commit 4c299a7).
//
// Chunks take their addresses from [arenaBase, heapBase): below the heap's
// size classes, so no arena buffer ever overlaps a heap block, and above
// ZSTAddr, so none is the zero-sized type's address either.
const (
	arenaBase  = traces.Addr(1) << 24 // 0x1000000
	chunkSize  = 64 << 10             // bytes a chunk holds unless a buffer needs more
	arenaAlign = 1 << alignShift
)

// MaxArenaSize is the largest buffer ArenaGet hands out.
const MaxArenaSize = uint64(heapBase - arenaBase)

// chunk is one stretch of arena address space; chunks are kept once made
// and reused by later frames.
type chunk struct {
	base traces.Addr
	size uint64
}

// bump is where the next buffer goes: offset off in chunk ci.
type bump struct {
	ci  int
	off uint64
}

// span is a stretch of arena addresses.
type span struct {
	lo   traces.Addr
	size uint64
}

// slotBuf is a slot's buffer: where it is and how much it holds.
type slotBuf struct {
	addr traces.Addr
	cap  uint64
}

// frame is one function call's frame.
type frame struct {
	mark   bump // the bump pointer at FnEnter, restored at FnExit
	nslots int
	slots  []slotBuf        // slots below denseSlots, grown to the highest asked for
	sparse map[int]*slotBuf // slots from denseSlots up: a frame declaring a billion costs nothing up front
	freed  []span           // arena-grow-frees-old: old buffers given back at once
}

// denseSlots bounds the slots a frame keeps in a slice.
const denseSlots = 4096

// slot returns slot i's buffer record, made empty on first use.
func (f *frame) slot(i int) *slotBuf {
	if i < denseSlots {
		if i >= len(f.slots) {
			f.slots = append(f.slots, make([]slotBuf, i+1-len(f.slots))...)
		}
		return &f.slots[i]
	}
	if f.sparse == nil {
		f.sparse = make(map[int]*slotBuf)
	}
	s := f.sparse[i]
	if s == nil {
		s = new(slotBuf)
		f.sparse[i] = s
	}
	return s
}

// arena is the bump allocator and the frame stack.
type arena struct {
	chunks []chunk
	next   traces.Addr // where a new chunk starts
	pos    bump
	frames []frame // frames[:depth] are open; the rest keep their capacity
	depth  int
}

// MaxSlots is the most slots a frame may have: a trace writes slot
// numbers as 31-bit integers.
const MaxSlots = math.MaxInt32

// FnEnter pushes a frame of slots slots, numbered from 0: a function (or a
// method: see MethodEnter) begins. A count below 0 or above MaxSlots is
// refused with an error that is no violation of the contract, and nothing
// is recorded, as a trace cannot say it.
func (r *Runtime) FnEnter(slots int) error {
	if slots < 0 || slots > MaxSlots {
		return fmt.Errorf("impl: fn_enter with %d slots: want 0 to %d", slots, MaxSlots)
	}
	r.emit(traces.Event{Op: traces.OpFnEnter, Slots: slots})
	r.arena.push(slots)
	return nil
}

// MethodEnter is FnEnter for a method's body. Methods need a frame as
// functions do (TensorLogic V2.1 panicked "No function frame" without
// one); it exists apart from FnEnter only so that the method-without-frame
// fault can skip the frame, as TensorLogic's codegen did before commit
// 3e006db. A method's frame is left with FnExit.
func (r *Runtime) MethodEnter(slots int) error {
	if r.HasFault(FaultMethodWithoutFrame) && slots >= 0 && slots <= MaxSlots {
		return nil // the bug: no frame, and so nothing to record
	}
	return r.FnEnter(slots)
}

// FnExit pops the top frame: every buffer handed out from it dies, and the
// bump pointer goes back to where it stood at FnEnter. With no frame it is
// a misuse ("No function frame").
func (r *Runtime) FnExit() error {
	r.emit(traces.Event{Op: traces.OpFnExit})
	a := &r.arena
	if a.depth == 0 {
		return &Error{Kind: traces.Misuse, Op: traces.OpFnExit, Msg: "No function frame"}
	}
	a.depth--
	f := &a.frames[a.depth]
	a.pos = f.mark
	clear(f.slots)
	f.slots, f.freed, f.sparse = f.slots[:0], f.freed[:0], nil
	return nil
}

// ArenaGet hands out the buffer of slot of the top frame for size bytes,
// for variable v ("" for none), and returns its address: the slot's buffer
// again if it holds size bytes, else a new one (the old one stays valid
// until FnExit). Size 0 is a zero-sized tensor: NULL, and the slot is left
// as it was. With no frame, or a slot out of range, it is a misuse and
// hands out nothing; a slot below 0 or above MaxSlots is refused
// unrecorded, as FnEnter's count is. A buffer larger than MaxArenaSize, or one the arena's
// address space has no room for, is ErrOutOfMemory, recorded nowhere.
func (r *Runtime) ArenaGet(slot int, size uint64, v string) (traces.Addr, error) {
	if slot < 0 || slot > MaxSlots {
		return 0, fmt.Errorf("impl: arena_get of slot %d: want 0 to %d", slot, MaxSlots)
	}
	ev := traces.Event{Op: traces.OpArenaGet, Slot: slot, Size: size, Var: v}
	a := &r.arena
	var msg string
	switch {
	case a.depth == 0:
		msg = "No function frame"
	case slot >= a.frames[a.depth-1].nslots:
		msg = "slot " + strconv.Itoa(slot) + " is out of range: the frame has " +
			strconv.Itoa(a.frames[a.depth-1].nslots) + " slots"
	}
	if msg != "" {
		r.emit(ev)
		return 0, &Error{Kind: traces.Misuse, Op: traces.OpArenaGet, Msg: msg}
	}
	if size == 0 {
		r.emit(ev)
		return 0, nil
	}
	f := &a.frames[a.depth-1]
	s := f.slot(slot)
	if s.addr == 0 || s.cap < size {
		need, err := roundArena(size)
		if err != nil {
			return 0, err
		}
		old := *s
		addr, ok := a.reuse(need)
		if !ok {
			if addr, err = a.alloc(need); err != nil {
				return 0, err
			}
		}
		if old.addr != 0 && r.HasFault(FaultArenaGrowFreesOld) {
			f.freed = append(f.freed, span{old.addr, old.cap})
		}
		*s = slotBuf{addr, need}
	}
	ev.Addr = s.addr
	r.emit(ev)
	return s.addr, nil
}

// roundArena rounds size up to the arena's alignment.
func roundArena(size uint64) (uint64, error) {
	if size > MaxArenaSize {
		return 0, fmt.Errorf("arena_get %d bytes: larger than %d: %w", size, MaxArenaSize, ErrOutOfMemory)
	}
	return (size + arenaAlign - 1) &^ (arenaAlign - 1), nil
}

// reuse is the arena-grow-frees-old fault's allocator: the first old
// buffer given back that holds need bytes, in the top frame or any frame
// below it (whose memory outlives the top one), is handed out again,
// though the contract keeps it alive until its frame exits. A correct
// runtime gives nothing back, so its lists are always empty.
func (a *arena) reuse(need uint64) (traces.Addr, bool) {
	for d := a.depth - 1; d >= 0; d-- {
		f := &a.frames[d]
		for i := range f.freed {
			if sp := &f.freed[i]; sp.size >= need {
				addr := sp.lo
				sp.lo += traces.Addr(need)
				sp.size -= need
				return addr, true
			}
		}
	}
	return 0, false
}

func (a *arena) push(slots int) {
	if a.depth == len(a.frames) {
		a.frames = append(a.frames, frame{})
	}
	f := &a.frames[a.depth]
	a.depth++
	f.mark, f.nslots = a.pos, slots
}

// alloc bumps need bytes (aligned, > 0) out of the current chunk, or out
// of the next chunk that holds them, making one if there is none.
func (a *arena) alloc(need uint64) (traces.Addr, error) {
	if a.pos.ci < len(a.chunks) && a.pos.off+need <= a.chunks[a.pos.ci].size {
		addr := a.chunks[a.pos.ci].base + traces.Addr(a.pos.off)
		a.pos.off += need
		return addr, nil
	}
	ci := a.pos.ci + 1
	if len(a.chunks) == 0 {
		ci = 0
	}
	for ci < len(a.chunks) && a.chunks[ci].size < need {
		ci++ // too small for this buffer: left empty until the frame exits
	}
	if ci == len(a.chunks) {
		if a.next == 0 {
			a.next = arenaBase
		}
		size := max(uint64(chunkSize), need)
		if size > uint64(heapBase-a.next) {
			return 0, fmt.Errorf("arena_get %d bytes: the arena's %d bytes of address space are used up: %w",
				need, MaxArenaSize, ErrOutOfMemory)
		}
		a.chunks = append(a.chunks, chunk{a.next, size})
		a.next += traces.Addr(size)
	}
	a.pos = bump{ci, need}
	return a.chunks[ci].base, nil
}

// Read and Write record an access of size bytes at addr through variable
// v ("" for none): a tensor operation reading an operand or writing its
// result. The runtime does not judge accesses, as a tensor kernel does
// not; the trace's checker does (a variable whose slot now holds another
// is stale-reuse, a buffer whose frame exited is use-after-free). Only
// NULL is refused, as invalid-address.
func (r *Runtime) Read(addr traces.Addr, size uint64, v string) error {
	return r.access(traces.OpRead, addr, size, v)
}

// Write: see Read.
func (r *Runtime) Write(addr traces.Addr, size uint64, v string) error {
	return r.access(traces.OpWrite, addr, size, v)
}

func (r *Runtime) access(op traces.Op, addr traces.Addr, size uint64, v string) error {
	r.emit(traces.Event{Op: op, Addr: addr, Size: size, HasSize: true, Var: v})
	if addr == 0 {
		return &Error{Kind: traces.InvalidAddress, Op: op, Msg: "an access of NULL"}
	}
	return nil
}

// Frames returns the slot count of each open frame, bottom first.
func (r *Runtime) Frames() []int {
	out := make([]int, r.arena.depth)
	for i := range out {
		out[i] = r.arena.frames[i].nslots
	}
	return out
}
