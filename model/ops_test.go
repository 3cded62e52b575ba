package model_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// The model's half of the op table's completeness tests (the traces half
// is traces/table_test.go): every op has a rule, and what an op's row
// says it names and whether it ends a life is what the model does.

// TestEveryOpHasARule steps each op of the table through a fresh Checker,
// with and without effects: none may be an op the model has no rule for.
func TestEveryOpHasARule(t *testing.T) {
	for _, op := range traces.Ops() {
		for _, effects := range []bool{false, true} {
			c := model.New(traces.Header{Effects: effects})
			ev := traces.Event{Op: op, Addr: 0x1000, Size: 8, Slots: 1, Name: "w"}
			_, err := c.Step(&ev, traces.Pos{Event: 0, Line: 2})
			var te *traces.Error
			if errors.As(err, &te) && te.Field == "op" {
				t.Errorf("op %s: not dispatched by the model (add its case to dispatch in model/checker.go): %v", op, err)
			}
		}
	}
}

// thingSetup makes one thing of a kind at 0x1000, and kills it.
type thingSetup struct {
	thing      traces.Things
	name       string
	make, kill []traces.Event
}

var thingSetups = []thingSetup{
	{traces.ThingBlock, "heap block",
		evs(traces.Event{Op: traces.OpMalloc, Addr: 0x1000, Size: 64}),
		evs(traces.Event{Op: traces.OpFree, Addr: 0x1000})},
	{traces.ThingObject, "object",
		evs(traces.Event{Op: traces.OpAlloc, Addr: 0x1000, Size: 64}),
		evs(traces.Event{Op: traces.OpRelease, Addr: 0x1000}, traces.Event{Op: traces.OpFree, Addr: 0x1000})},
	{traces.ThingArena, "arena buffer",
		evs(traces.Event{Op: traces.OpFnEnter, Slots: 1}, traces.Event{Op: traces.OpArenaGet, Addr: 0x1000, Size: 64}),
		evs(traces.Event{Op: traces.OpFnExit})},
	{traces.ThingSegment, "device segment",
		evs(traces.Event{Op: traces.OpDevMalloc, Addr: 0x1000, Size: 4096}),
		evs(traces.Event{Op: traces.OpDevFree, Addr: 0x1000})},
	// The segment starts below the block, so that only the block starts
	// at 0x1000.
	{traces.ThingPool, "pool block",
		evs(traces.Event{Op: traces.OpDevMalloc, Addr: 0xf00, Size: 8192}, traces.Event{Op: traces.OpPoolGet, Addr: 0x1000, Size: 64}),
		evs(traces.Event{Op: traces.OpPoolPut, Addr: 0x1000})},
	{traces.ThingMapping, "mapped range",
		evs(traces.Event{Op: traces.OpDevMap, Addr: 0x1000, Size: 4096}),
		evs(traces.Event{Op: traces.OpDevUnmap, Addr: 0x1000, Size: 4096})},
}

func evs(e ...traces.Event) []traces.Event { return e }

// TestOpNames holds the model to each op's row: an op whose addr names a
// kind of thing takes a live one of that kind without invalid-address, and
// any other kind with it; on a dead one of that kind it is a double-free
// if its row says it ends a life, else a use-after-free.
func TestOpNames(t *testing.T) {
	all := traces.Things(0)
	for _, s := range thingSetups {
		all |= s.thing
	}
	for _, op := range traces.Ops() {
		names := op.Names()
		if names&^all != 0 {
			t.Errorf("op %s: names a kind of thing that thingSetups (ops_test.go) cannot make", op)
		}
		if names == 0 {
			continue
		}
		for _, s := range thingSetups {
			ev := traces.Event{Op: op, Addr: 0x1000, Name: "w"}
			vs := atLast(t, append(slices.Clone(s.make), ev))
			got := kindsOf(vs)
			named := names&s.thing != 0
			for _, v := range vs {
				// The rule reports what it serves: a rule that names another
				// op (a copy-pasted lookup) reads "record_stream of ..." here.
				if !strings.HasPrefix(v.Message, op.String()+" of ") && !strings.HasPrefix(v.Message, op.String()+": ") {
					t.Errorf("op %s on a live %s: the violation does not name its op: %q", op, s.name, v.Message)
				}
			}
			if bad := slices.Contains(got, traces.InvalidAddress); bad == named {
				t.Errorf("op %s on a live %s: violations %q; its row says it names %s: %t", op, s.name, got, s.name, named)
			}
			if !named {
				continue
			}
			want := traces.UseAfterFree
			if op.EndsLife() {
				want = traces.DoubleFree
			}
			trace := append(append(slices.Clone(s.make), s.kill...), ev)
			vs = atLast(t, trace)
			if got := kindsOf(vs); !slices.Equal(got, []traces.Kind{want}) {
				t.Errorf("op %s on a dead %s: violations %q, want [%s] (its row: ends a life %t)", op, s.name, got, want, op.EndsLife())
			} else if !strings.HasPrefix(vs[0].Message, op.String()+" of ") {
				t.Errorf("op %s on a dead %s: the violation does not name its op: %q", op, s.name, vs[0].Message)
			}
		}
	}
}

// atLast steps trace (with effects, in a scope, since register with none
// is misuse) and returns the violations its last event revealed; those of
// earlier events fail t.
func atLast(t *testing.T, trace []traces.Event) []traces.Violation {
	t.Helper()
	c := model.New(traces.Header{Effects: true})
	trace = append([]traces.Event{{Op: traces.OpScopeEnter}}, trace...)
	var last []traces.Violation
	for i := range trace {
		vs, err := c.Step(&trace[i], traces.Pos{Event: i, Line: i + 2})
		if err != nil {
			t.Fatalf("event %d (%s): %v", i, trace[i].Op, err)
		}
		if i < len(trace)-1 && len(vs) > 0 {
			t.Fatalf("event %d (%s) of the setup: %s: %s", i, trace[i].Op, vs[0].Kind, vs[0].Message)
		}
		if i == len(trace)-1 {
			last = slices.Clone(vs)
		}
	}
	return last
}

func kindsOf(vs []traces.Violation) []traces.Kind {
	var kinds []traces.Kind
	for _, v := range vs {
		kinds = append(kinds, v.Kind)
	}
	return kinds
}
