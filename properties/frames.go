package properties

import (
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// Layer 3 against impl's runtime: the runtime's planner
// (impl.Runtime.PlanFrame, where the planner-shares-overlapping fault
// lives) plans each frame a program enters; the program keeps its own view
// of its frames (flat.Frames), which is what arena_get, read and write
// name, so a runtime that loses a frame or plans it wrongly shows in the
// trace.

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
func (s *session) planFrame(st *flat.Step, ev *traces.Event) {
	p, err := s.rt.PlanFrame(intervals(st.Lives))
	if err != nil { // lives are never negative: a planner that refuses them is wrong
		s.mismatch(len(s.res.Calls), MismatchPanic, "the planner refused lifetimes %v: %v", st.Lives, err)
	}
	s.planned = p
	ev.Slots = p.Size
}

// enterFrame pushes the frame the program just entered, as planned.
func (s *session) enterFrame(st *flat.Step) {
	s.frames.Enter(st.Lives, s.planned.Slots, s.planned.Size)
}
