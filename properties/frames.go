package properties

import (
	"strconv"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// Layer 3 in programs: a function's frame is planned, as TensorLogic's
// compiler plans one. An fn_enter step declares the frame's variables by
// their lifetimes (Step.Lives): the k-th arena_get in the frame is
// statement k and defines variable k, which lives until statement
// k+Lives[k]. At run time the runtime's planner (impl.Runtime.PlanFrame,
// where the planner-shares-overlapping fault lives) turns the lifetimes
// into slots and the frame's size; each arena_get takes its variable's
// slot, and each read or write goes through a variable live at the
// current statement. A correct plan never lets two variables live at one
// statement share a slot, so such a program never reads through a stale
// variable; a wrong plan, or a runtime that loses a frame, does, and the
// model sees it in the trace.
//
// The steps' refs name objects by what the model holds alive; variables
// are named by what the program itself knows (progFrame): the frames it
// entered and the buffers it was given. That is the compiled code's view,
// which a faulty runtime can betray.

// progFrame is one frame as the program knows it.
type progFrame struct {
	lives []uint8
	plan  impl.Plan
	stmt  int           // arena_gets made in the frame so far
	addrs []traces.Addr // per variable: the buffer it was given, 0 if none yet
	sizes []uint64
}

// maxLives bounds the variables of a generated frame, and lifeSpan how
// many statements after its definition one lives.
const (
	maxLives = 4
	lifeSpan = 3 // lifetimes are 0 to lifeSpan-1: see lifeTable
)

// lifeTable maps a byte's low bits to a lifetime: mostly short, as most
// temporaries are, so that slots are shared (and grow) often, with one
// long-lived variable now and then to share around.
var lifeTable = [4]uint8{0, 0, 1, 2}

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
var varNames = func() (t [26][maxLives]string) {
	for d := range t {
		for k := range t[d] {
			t[d][k] = string(rune('a'+d)) + strconv.Itoa(k)
		}
	}
	return t
}()

func varName(depth, k int) string { return varNames[(depth-1)%26][k] }

// intervals returns the lifetimes the planner plans for.
func intervals(lives []uint8) []impl.Interval {
	out := make([]impl.Interval, len(lives))
	for k, l := range lives {
		out[k] = impl.Interval{First: k, Last: k + int(l)}
	}
	return out
}

// planFrame plans the frame an fn_enter step declares and keeps the plan
// for enterFrame.
func (s *session) planFrame(st *Step, ev *traces.Event) {
	p, err := s.rt.PlanFrame(intervals(st.Lives))
	if err != nil { // lives are never negative: a planner that refuses them is wrong
		s.mismatch(len(s.res.Calls), MismatchPanic, "the planner refused lifetimes %v: %v", st.Lives, err)
	}
	s.planned = p
	ev.Slots = p.Size
}

// enterFrame pushes the frame the program just entered.
func (s *session) enterFrame(st *Step) {
	n := len(st.Lives)
	s.frames = append(s.frames, progFrame{
		lives: st.Lives, plan: s.planned,
		addrs: make([]traces.Addr, n), sizes: make([]uint64, n),
	})
}

func (s *session) exitFrame() {
	if n := len(s.frames); n > 0 {
		s.frames = s.frames[:n-1]
	}
}

// arenaSlot sets the slot and the variable of an arena_get: the next
// statement's variable and its planned slot. Past the declared variables
// the slot is the frame's size, out of range: a misuse, on purpose. With
// no frame the runtime is asked for slot 0 of none.
func (s *session) arenaSlot(ev *traces.Event) {
	n := len(s.frames)
	if n == 0 {
		return
	}
	f := &s.frames[n-1]
	if k := f.stmt; k < len(f.lives) {
		ev.Slot, ev.Var = f.plan.Slots[k], varName(n, k)
	} else {
		ev.Slot = f.plan.Size
	}
}

// arenaGot notes the buffer the runtime handed out for the statement's
// variable, and moves to the next statement.
func (s *session) arenaGot(ev *traces.Event, err error) {
	n := len(s.frames)
	if n == 0 {
		return
	}
	f := &s.frames[n-1]
	if k := f.stmt; k < len(f.lives) && err == nil && ev.Addr != 0 {
		f.addrs[k], f.sizes[k] = ev.Addr, ev.Size
	}
	f.stmt++
}

// resolveVar sets the address, variable and size of a read or write: the
// st.Var-th (modulo their number) of the variables live at the current
// statement that hold a buffer, oldest first, and makes st.Var canonical.
// With none, the access is of NULL: a misuse the runtime refuses.
func (s *session) resolveVar(st *Step, ev *traces.Event) {
	ev.HasSize = true // the runtime records an access's size, 0 for NULL
	n := len(s.frames)
	if n == 0 {
		st.Var = 0
		return
	}
	f := &s.frames[n-1]
	now := f.stmt - 1
	var live [maxLives]int
	m := 0
	for k := 0; k < min(f.stmt, len(f.lives)); k++ {
		if f.addrs[k] != 0 && k+int(f.lives[k]) >= now && m < len(live) {
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
	ev.Addr, ev.Var, ev.Size = f.addrs[k], varName(n, k), f.sizes[k]
}
