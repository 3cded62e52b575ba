package impl_test

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/impl"
)

// drawLives draws lifetimes of two shapes, half the time each: up to 40
// spread over up to 60 statements, or a staircase of 40 to 100, one
// starting at each statement, that last up to 30 more. The staircase keeps
// a score of variables live at once, ending in every order, so the
// planner's queue of live variables is deep and pops often: a heap that
// compares the wrong children keeps an item below a larger one only
// there, three levels down, and spread lifetimes seldom reach it.
func drawLives(t *rapid.T) []impl.Interval {
	if rapid.Bool().Draw(t, "staircase") {
		vars := make([]impl.Interval, rapid.IntRange(40, 100).Draw(t, "vars"))
		for i := range vars {
			vars[i] = impl.Interval{First: i, Last: i + rapid.IntRange(0, 30).Draw(t, "length")}
		}
		return vars
	}
	n := rapid.IntRange(0, 40).Draw(t, "vars")
	vars := make([]impl.Interval, n)
	for i := range vars {
		first := rapid.IntRange(0, 60).Draw(t, "first")
		vars[i] = impl.Interval{First: first, Last: first + rapid.IntRange(0, 10).Draw(t, "length")}
	}
	return vars
}

// greedyPlan is the plan PlanFrame promises, computed the slow way: the
// variables in order of first statement, then last, then index, each
// taking the lowest slot that no variable before it still live at its
// first statement holds. It is an independent statement of the rule,
// with no queue to get wrong.
func greedyPlan(vars []impl.Interval) impl.Plan {
	order := make([]int, len(vars))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := vars[a].First - vars[b].First; c != 0 {
			return c
		}
		if c := vars[a].Last - vars[b].Last; c != 0 {
			return c
		}
		return a - b
	})
	p := impl.Plan{Slots: make([]int, len(vars))}
	for k, i := range order {
		held := map[int]bool{}
		for _, j := range order[:k] {
			if vars[j].Last >= vars[i].First {
				held[p.Slots[j]] = true
			}
		}
		s := 0
		for held[s] {
			s++
		}
		p.Slots[i] = s
		p.Size = max(p.Size, s+1)
	}
	return p
}

// planBreach returns what is wrong with p as a plan for vars: two
// variables live at one statement in one slot, a slot outside the frame,
// or a frame larger or smaller than the most variables live at once.
func planBreach(vars []impl.Interval, p impl.Plan) string {
	if len(p.Slots) != len(vars) {
		return fmt.Sprintf("%d slots for %d variables", len(p.Slots), len(vars))
	}
	for i, a := range vars {
		if p.Slots[i] < 0 || p.Slots[i] >= p.Size {
			return fmt.Sprintf("variable %d in slot %d of a frame of %d", i, p.Slots[i], p.Size)
		}
		for j := i + 1; j < len(vars); j++ {
			b := vars[j]
			if p.Slots[i] == p.Slots[j] && a.First <= b.Last && b.First <= a.Last {
				return fmt.Sprintf("variables %d %v and %d %v share slot %d", i, a, j, b, p.Slots[i])
			}
		}
	}
	most, end := 0, 0
	for _, v := range vars {
		end = max(end, v.Last)
	}
	for s := 0; s <= end; s++ {
		n := 0
		for _, v := range vars {
			if v.First <= s && s <= v.Last {
				n++
			}
		}
		most = max(most, n)
	}
	if p.Size != most {
		return fmt.Sprintf("a frame of %d slots; at most %d variables are live at once", p.Size, most)
	}
	return ""
}

// TestPlanFrame states the planner's properties with rapid: no two
// variables live at the same statement share a slot, the frame is exactly
// as large as the most variables live at once, each variable has the
// slot the greedy rule gives it (greedyPlan), and the plan is
// deterministic.
func TestPlanFrame(t *testing.T) {
	rapid.Check(t, planFrameProperty(impl.PlanFrame))
}

// planFrameProperty is TestPlanFrame's property of plan.
func planFrameProperty(plan func([]impl.Interval) (impl.Plan, error)) func(*rapid.T) {
	return func(t *rapid.T) {
		vars := drawLives(t)
		p, err := plan(vars)
		if err != nil {
			t.Fatal(err)
		}
		if b := planBreach(vars, p); b != "" {
			t.Fatalf("%s\nplan %+v", b, p)
		}
		if want := greedyPlan(vars); !slices.Equal(p.Slots, want.Slots) || p.Size != want.Size {
			t.Fatalf("plan %+v, the greedy rule gives %+v", p, want)
		}
		q, _ := plan(slices.Clone(vars))
		if !slices.Equal(p.Slots, q.Slots) || p.Size != q.Size {
			t.Fatalf("two plans of one input: %+v and %+v", p, q)
		}
	}
}

// TestPlanFrameCatchesTheFault: the properties fail for the planner of
// the planner-shares-overlapping fault, so they can fail.
func TestPlanFrameCatchesTheFault(t *testing.T) {
	f := flag.Lookup("rapid.nofailfile") // the failure is expected: keep testdata clean
	old := f.Value.String()
	_ = f.Value.Set("true")
	t.Cleanup(func() { _ = f.Value.Set(old) })
	rt := impl.New(impl.Config{Faults: []impl.Fault{impl.FaultPlannerSharesOverlapping}})
	tb := &failRecorder{}
	rapid.Check(tb, func(t *rapid.T) {
		vars := drawLives(t)
		p, _ := rt.PlanFrame(vars)
		if b := planBreach(vars, p); b != "" {
			t.Fatal(b)
		}
	})
	if !tb.failed {
		t.Error("the faulty planner passed the planner's properties")
	}
}

func TestPlanFrameCases(t *testing.T) {
	cases := []struct {
		vars  []impl.Interval
		slots []int
		size  int
		err   string
	}{
		{nil, []int{}, 0, ""},
		{[]impl.Interval{{0, 0}}, []int{0}, 1, ""},
		{[]impl.Interval{{0, 1}, {1, 1}}, []int{0, 1}, 2, ""},            // meet at statement 1: overlap
		{[]impl.Interval{{0, 0}, {1, 1}, {2, 2}}, []int{0, 0, 0}, 1, ""}, // disjoint: one slot
		{[]impl.Interval{{2, 5}, {0, 1}, {0, 3}, {4, 4}}, []int{0, 0, 1, 1}, 2, ""},
		{[]impl.Interval{{0, 9}, {1, 2}, {3, 4}, {1, 4}}, []int{0, 1, 1, 2}, 3, ""},
		// Small hard cases for the queues: six or seven variables live
		// at once, ending in an order that makes the queue of live ones
		// sift an item three levels down. A heap whose sift-down compares
		// the right child with the left one instead of with the least so
		// far keeps an ended variable below a live one, frees its slot
		// late, and plans a frame one slot larger (7 and 8).
		{[]impl.Interval{{4, 4}, {0, 3}, {0, 2}, {3, 4}, {0, 3}, {0, 5}, {4, 4}, {2, 3}, {1, 4}, {4, 4}},
			[]int{1, 1, 0, 0, 2, 3, 2, 5, 4, 5}, 6, ""},
		{[]impl.Interval{{1, 3}, {1, 5}, {0, 5}, {5, 5}, {5, 5}, {5, 5}, {2, 3}, {4, 5}, {2, 5}, {3, 4}, {1, 4}},
			[]int{1, 3, 0, 2, 4, 6, 4, 1, 5, 6, 2}, 7, ""},
		// A push that sifts up past the wrong parent leaves a queue out
		// of order: the last variable takes slot 1, not the lowest free
		// one, 0.
		{[]impl.Interval{{0, 1}, {0, 1}, {0, 0}, {0, 3}, {0, 3}, {1, 2}, {1, 3}, {1, 3}, {3, 3}},
			[]int{1, 2, 0, 3, 4, 0, 5, 6, 0}, 7, ""},
		{[]impl.Interval{{0, 1}, {3, 2}}, nil, 0, "variable 1 lives from statement 3 to 2"},
		{[]impl.Interval{{-1, 2}}, nil, 0, "variable 0 lives from statement -1 to 2"},
	}
	for _, c := range cases {
		p, err := impl.PlanFrame(c.vars)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("PlanFrame(%v) = %v, want an error containing %q", c.vars, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(p.Slots, c.slots) || p.Size != c.size {
			t.Errorf("PlanFrame(%v) = %v %d (%v), want %v %d", c.vars, p.Slots, p.Size, err, c.slots, c.size)
		}
	}
}

// failRecorder is a rapid.TB that only notes failure, to show that a
// property can fail without failing the test that shows it.
type failRecorder struct{ failed bool }

func (f *failRecorder) Helper()               {}
func (f *failRecorder) Name() string          { return "planner" }
func (f *failRecorder) Logf(string, ...any)   {}
func (f *failRecorder) Log(...any)            {}
func (f *failRecorder) Skipf(string, ...any)  {}
func (f *failRecorder) Skip(...any)           {}
func (f *failRecorder) SkipNow()              {}
func (f *failRecorder) Errorf(string, ...any) { f.failed = true }
func (f *failRecorder) Error(...any)          { f.failed = true }
func (f *failRecorder) Fatalf(string, ...any) { f.failed = true }
func (f *failRecorder) Fatal(...any)          { f.failed = true }
func (f *failRecorder) FailNow()              { f.failed = true }
func (f *failRecorder) Fail()                 { f.failed = true }
func (f *failRecorder) Failed() bool          { return f.failed }
