package flat

import (
	"slices"
	"strconv"

	"github.com/tlcheck/tlcheck/traces"
)

// Layer 3 in programs: a function's frame is planned, as TensorLogic's
// compiler plans one. An fn_enter step declares the frame's variables by
// their lifetimes (Step.Lives): the k-th arena_get in the frame is
// statement k and defines variable k, which lives until statement
// k+Lives[k]. A planner turns the lifetimes into slots and the frame's
// size (package properties asks impl's runtime, whose planner is under
// test; Lower uses PlanFrame); each arena_get takes its variable's slot,
// and each read or write goes through a variable live at the current
// statement. A correct plan never lets two variables live at one
// statement share a slot, so such a program never reads through a stale
// variable; a wrong plan, or a runtime that loses a frame, does, and the
// model sees it in the trace.
//
// The steps' refs name objects by what the model holds alive; variables
// are named by what the program itself knows (Frames): the frames it
// entered and the buffers it was given. That is the compiled code's view,
// which a faulty runtime can betray.

// MaxVars bounds the variables of a frame, and lifeSpan how many
// statements after its definition one lives.
const (
	MaxVars  = 4
	lifeSpan = 3 // lifetimes are 0 to lifeSpan-1: see lifeTable
)

// lifeTable maps a byte's low bits to a lifetime: mostly short, as most
// temporaries are, so that slots are shared (and grow) often, with one
// long-lived variable now and then to share around.
var lifeTable = [4]uint8{0, 0, 1, 2}

// Lifetimes returns the lifetimes a generated frame's variables take,
// each as often as Decode draws it.
func Lifetimes() []uint8 { return slices.Clone(lifeTable[:]) }

// lifeByte is lifeTable's inverse, for the lifetimes it holds.
func lifeByte(l uint8) byte {
	for i, t := range lifeTable {
		if t == l {
			return byte(i)
		}
	}
	return 0
}

// varNames names variable k of a frame at depth d (from 1): a0 a1 ... at
// depth 1, b0 b1 ... at depth 2, so that the variables of a caller and a
// callee never share a name; depths wrap after z.
var varNames = func() (t [26][MaxVars]string) {
	for d := range t {
		for k := range t[d] {
			t[d][k] = string(rune('a'+d)) + strconv.Itoa(k)
		}
	}
	return t
}()

func varName(depth, k int) string { return varNames[(depth-1)%26][k] }

// PlanFrame plans a frame whose variables live as lives says, as a
// correct planner does: variable k, defined by statement k, takes the
// lowest slot that no earlier variable still live at statement k holds.
// It returns each variable's slot and the frame's slot count, the largest
// number of variables live at once. (impl.PlanFrame makes the same plan
// by a linear scan over any lifetimes; properties' tests hold the two
// equal over every frame a program can declare.)
func PlanFrame(lives []uint8) (slots []int, size int) {
	slots = make([]int, len(lives))
	for k := range lives {
		slot := 0
		for taken := true; taken; {
			taken = false
			for j := range k {
				if slots[j] == slot && j+int(lives[j]) >= k {
					slot++
					taken = true
					break
				}
			}
		}
		slots[k] = slot
		size = max(size, slot+1)
	}
	return slots, size
}

// Frames is what a program knows of the frames it entered, bottom first:
// each frame's variables, their slots, the statement it is at and the
// buffer each variable was given. The harness that makes a program's calls
// keeps one, so that arena_get, read and write name what the compiled
// code would name, whatever the runtime answered.
type Frames struct {
	stack []frame
}

// frame is one frame as the program knows it.
type frame struct {
	lives []uint8
	slots []int         // per variable: its planned slot
	size  int           // the frame's slot count
	stmt  int           // arena_gets made in the frame so far
	addrs []traces.Addr // per variable: the buffer it was given, 0 if none yet
	sizes []uint64
}

// Empty returns f with no frame, keeping its memory.
func (f Frames) Empty() Frames { return Frames{stack: f.stack[:0]} }

// Depth is the number of frames entered and not yet exited.
func (f *Frames) Depth() int { return len(f.stack) }

// Enter pushes the frame an fn_enter step declared, with its plan: slots
// per variable and the frame's slot count.
func (f *Frames) Enter(lives []uint8, slots []int, size int) {
	n := len(lives)
	f.stack = append(f.stack, frame{
		lives: lives, slots: slots, size: size,
		addrs: make([]traces.Addr, n), sizes: make([]uint64, n),
	})
}

// Exit pops the top frame, if any.
func (f *Frames) Exit() {
	if n := len(f.stack); n > 0 {
		f.stack = f.stack[:n-1]
	}
}

// ArenaSlot sets the slot and the variable of an arena_get: the next
// statement's variable and its planned slot. Past the declared variables
// the slot is the frame's size, out of range: a misuse, on purpose. With
// no frame the runtime is asked for slot 0 of none.
func (f *Frames) ArenaSlot(ev *traces.Event) {
	n := len(f.stack)
	if n == 0 {
		return
	}
	fr := &f.stack[n-1]
	if k := fr.stmt; k < len(fr.lives) {
		ev.Slot, ev.Var = fr.slots[k], varName(n, k)
	} else {
		ev.Slot = fr.size
	}
}

// ArenaGot notes the buffer the runtime handed out for the statement's
// variable (ev.Addr, unless the call failed), and moves to the next
// statement.
func (f *Frames) ArenaGot(ev *traces.Event, err error) {
	n := len(f.stack)
	if n == 0 {
		return
	}
	fr := &f.stack[n-1]
	if k := fr.stmt; k < len(fr.lives) && err == nil && ev.Addr != 0 {
		fr.addrs[k], fr.sizes[k] = ev.Addr, ev.Size
	}
	fr.stmt++
}

// ResolveVar sets the address, variable and size of a read or write: the
// st.Var-th (modulo their number) of the variables live at the current
// statement that hold a buffer, oldest first, and makes st.Var canonical.
// With none, the access is of NULL: a misuse the runtime refuses.
func (f *Frames) ResolveVar(st *Step, ev *traces.Event) {
	ev.HasSize = true // the runtime records an access's size, 0 for NULL
	n := len(f.stack)
	if n == 0 {
		st.Var = 0
		return
	}
	fr := &f.stack[n-1]
	now := fr.stmt - 1
	var live [MaxVars]int
	m := 0
	for k := 0; k < min(fr.stmt, len(fr.lives)); k++ {
		if fr.addrs[k] != 0 && k+int(fr.lives[k]) >= now && m < len(live) {
			live[m] = k
			m++
		}
	}
	if m == 0 {
		st.Var = 0
		return
	}
	st.Var %= uint8(m)
	k := live[st.Var]
	ev.Addr, ev.Var, ev.Size = fr.addrs[k], varName(n, k), fr.sizes[k]
}
