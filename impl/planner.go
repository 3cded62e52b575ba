package impl

import (
	"fmt"
	"slices"
)

// The slot planner: which of a function's tensor variables share a slot of
// its frame. TensorLogic's compiler plans a frame by liveness: a variable
// lives from the first statement that uses it to the last, and variables
// whose lifetimes do not overlap can share a slot. Linear scan over the
// lifetimes in order of their start, handing each the lowest slot no live
// variable holds, uses exactly as many slots as variables are live at once
// at the busiest statement: lifetimes form an interval graph, which the
// greedy colouring by start colours optimally.

// Interval is a variable's lifetime: the first and the last statement that
// use it, both included. A variable defined by statement 3 and last read by
// statement 5 is {3, 5}; one used by a single statement is {k, k}. Two
// variables with Last of one equal to First of the other overlap: the
// statement reads the first while it writes the second.
type Interval struct {
	First, Last int
}

// Plan is a frame's layout: Slots[i] is the slot of variable i, and Size
// the frame's slot count, the FnEnter argument.
type Plan struct {
	Slots []int
	Size  int
}

// PlanFrame plans a frame for variables with the given lifetimes, in
// O(n log n): no two variables live at the same statement share a slot,
// Size is the largest number of variables live at once, and the same
// input always gives the same plan. The rule: the variables in order of
// their first statement, then their last, then their index, each take the
// lowest slot that no variable before them still live at their first
// statement holds. A lifetime that ends before it begins or begins before
// statement 0 is an error naming the variable.
func PlanFrame(vars []Interval) (Plan, error) {
	return planFrame(vars, false)
}

// PlanFrame is the package's PlanFrame as this runtime's compiler runs it:
// with the planner-shares-overlapping fault on, it takes a lifetime's last
// statement as already over, so a variable last used by a statement shares
// its slot with the one that statement defines.
func (r *Runtime) PlanFrame(vars []Interval) (Plan, error) {
	return planFrame(vars, r.faults.has(fPlannerSharesOverlapping))
}

func planFrame(vars []Interval, endExclusive bool) (Plan, error) {
	for i, v := range vars {
		if v.First < 0 || v.Last < v.First {
			return Plan{}, fmt.Errorf("impl: plan: variable %d lives from statement %d to %d: want 0 <= first <= last", i, v.First, v.Last)
		}
	}
	// By start, then end, then index: a total order, so the plan is
	// deterministic whatever the sort's stability. The lifetimes are
	// copied beside their index so that the sort reads memory in order.
	order := make([]ordered, len(vars))
	for i, v := range vars {
		order[i] = ordered{v, i}
	}
	slices.SortFunc(order, func(a, b ordered) int {
		if c := a.First - b.First; c != 0 {
			return c
		}
		if c := a.Last - b.Last; c != 0 {
			return c
		}
		return a.index - b.index
	})
	p := Plan{Slots: make([]int, len(vars))}
	live := minHeap[held]{before: heldBefore} // variables holding a slot, soonest to end first
	free := minHeap[int]{before: intBefore}   // slots given back, lowest first
	for _, v := range order {
		i := v.index
		// A variable whose last statement is before this one's first is
		// over: its slot is free. The fault's off-by-one frees it when
		// the last statement is this one's first too.
		for len(live.items) > 0 && (live.items[0].last < v.First || endExclusive && live.items[0].last == v.First) {
			free.push(live.pop().slot)
		}
		slot := p.Size
		if len(free.items) > 0 {
			slot = free.pop()
		} else {
			p.Size++
		}
		p.Slots[i] = slot
		live.push(held{last: v.Last, slot: slot})
	}
	return p, nil
}

// ordered is a lifetime and the variable's index, as the scan visits them.
type ordered struct {
	Interval
	index int
}

// held is a slot held by a live variable until statement last.
type held struct{ last, slot int }

func heldBefore(a, b held) bool { return a.last < b.last || a.last == b.last && a.slot < b.slot }
func intBefore(a, b int) bool   { return a < b }

// minHeap is a binary heap of T, least first by before: the planner's two
// queues, typed so that a push allocates nothing past the slice's growth.
type minHeap[T any] struct {
	items  []T
	before func(a, b T) bool
}

func (h *minHeap[T]) push(x T) {
	h.items = append(h.items, x)
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.before(h.items[i], h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *minHeap[T]) pop() T {
	top := h.items[0]
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items = h.items[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h.before(h.items[l], h.items[m]) {
			m = l
		}
		if l+1 < n && h.before(h.items[l+1], h.items[m]) {
			m = l + 1
		}
		if m == i {
			break
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
	return top
}
