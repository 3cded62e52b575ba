package properties

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// TestFlatResolveIsACorrectRunsCalls: flat.Resolve, which runs no
// runtime, makes the calls a run against impl's runtime without faults
// makes, up to the addresses: the same steps as made, and events that
// name the same things (each thing made named by the call that made it).
// Dead refs are made Live first: Resolve never reuses an address, so its
// dead objects are not impl's dead addresses.
func TestFlatResolveIsACorrectRunsCalls(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	for range 1000 {
		p := liveOnly(Generate(r))
		run, _ := Run(p, impl.Config{})
		made := flat.Resolve(p)
		if len(made) != len(run.Calls) {
			t.Fatalf("flat.Resolve made %d calls, Run %d\n%v", len(made), len(run.Calls), p)
		}
		var want, got namer
		for i, c := range run.Calls {
			var ev traces.Event
			if c.Event >= 0 {
				ev = run.Trace[c.Event]
			}
			w, g := want.named(ev), got.named(made[i].Event)
			if c.Step.String() != made[i].Step.String() || w != g {
				t.Fatalf("call %d: flat.Resolve made %v: %s; Run %v: %s\n%v", i, made[i].Step, g, c.Step, w, p)
			}
		}
	}
}

// liveOnly returns p with its Dead refs made Live.
func liveOnly(p Program) Program {
	p = p.Clone()
	live := func(r *flat.Ref) {
		if r.Pick == flat.Dead {
			r.Pick = flat.Live
		}
	}
	for i := range p.Steps {
		live(&p.Steps[i].Target)
		for k := range p.Steps[i].Fields {
			live(&p.Steps[i].Fields[k])
		}
	}
	return p
}

// namer names the things of a trace by the call that made them, as
// package drive's handles do: the newest thing made at an address.
type namer struct {
	made  int
	names map[traces.Addr]int
}

// named describes ev with its addresses replaced by names.
func (n *namer) named(ev traces.Event) string {
	if n.names == nil {
		n.names = map[traces.Addr]int{}
	}
	name := func(a traces.Addr) int {
		if a == 0 {
			return 0
		}
		return n.names[a]
	}
	fields := make([]int, len(ev.Fields))
	for i, a := range ev.Fields {
		fields[i] = name(a)
	}
	target := name(ev.Addr)
	switch ev.Op {
	case traces.OpAlloc, traces.OpStructInit, traces.OpArenaGet:
		n.made++
		target = n.made
		if ev.Addr != 0 {
			n.names[ev.Addr] = n.made
		} else {
			target = 0
		}
	}
	return fmt.Sprintf("%v %d size=%d name=%q fields=%v slots=%d slot=%d var=%q", ev.Op, target, ev.Size, ev.Name, fields, ev.Slots, ev.Slot, ev.Var)
}

// TestPlanFrameIsImplsPlan: flat.PlanFrame plans every frame a program can
// declare as impl's planner without faults does.
func TestPlanFrameIsImplsPlan(t *testing.T) {
	var lives []uint8
	var each func()
	each = func() {
		slots, size := flat.PlanFrame(lives)
		want, err := impl.PlanFrame(intervals(lives))
		if err != nil || size != want.Size || !slices.Equal(slots, want.Slots) {
			t.Errorf("lives %v: flat.PlanFrame = %v, %d; impl.PlanFrame = %+v, %v", lives, slots, size, want, err)
		}
		if len(lives) == flat.MaxVars {
			return
		}
		for _, l := range []uint8{0, 1, 2} {
			lives = append(lives, l)
			each()
			lives = lives[:len(lives)-1]
		}
	}
	each()
}
