package drive_test

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// correctUse runs p on impl's runtime without faults, with the model, and
// says what in it is not correct use: a call the runtime refused, or a
// violation the model reported ("" if none).
func correctUse(p flat.Program) string {
	r, _ := properties.Run(p, impl.Config{}) // a correct runtime's answers and the model's verdicts
	for i, c := range r.Calls {
		if c.Err != nil {
			return "call " + c.Step.String() + " refused: " + c.Err.Error() + " (call " + strconv.Itoa(i) + ")"
		}
	}
	for _, v := range r.Verdicts {
		if v.Explained && v.Kind == traces.Leak {
			continue // a leak at end of what the program kept: its own
		}
		return "the model reports " + string(v.Kind) + ": " + v.Message
	}
	return ""
}

// TestCorrectUse: the programs Correct makes of flat.Generate's
// (which misuse the runtime on purpose, one misuse in four kept), and
// GenerateProgram's, long ones included, are correct use: impl's runtime
// refuses none of their calls and the model finds nothing wrong before
// end; and Correct leaves a correct program as it is.
func TestCorrectUse(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sources := []struct {
		name string
		gen  func() flat.Program
	}{
		{"flat.Generate", func() flat.Program { return drive.Correct(flat.Generate(rng)) }},
		{"GenerateProgram", func() flat.Program { return drive.GenerateProgram(rng, 0) }},
		{"GenerateProgram 2000 steps", func() flat.Program { return drive.GenerateProgram(rng, 2000) }},
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			n := 1500
			if src.name == "GenerateProgram 2000 steps" || testing.Short() {
				n = 30
			}
			for i := range n {
				p := src.gen()
				if msg := correctUse(p); msg != "" {
					t.Fatalf("program %d is not correct use: %s\n%v", i, msg, p)
				}
				if again := drive.Correct(p); !reflect.DeepEqual(again.Steps, p.Steps) && len(p.Steps) > 0 {
					t.Fatalf("program %d: Correct changed a correct program:\n%v\n%v", i, p, again)
				}
			}
		})
	}
}

// TestCorrectDrops: each misuse the issue names is dropped or pointed at
// an object the program may use.
func TestCorrectDrops(t *testing.T) {
	live := func(i uint8) flat.Ref { return flat.Ref{Pick: flat.Live, Index: i} }
	dead := flat.Ref{Pick: flat.Dead}
	step := func(op traces.Op, r flat.Ref) flat.Step { return flat.Step{Op: op, Target: r} }
	cases := []struct {
		name string
		in   []flat.Step
		want string
	}{
		{"release past the count", []flat.Step{{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Size: 16}, step(traces.OpRelease, live(0))},
			"scope_enter; alloc 16"},
		{"register without a reference", []flat.Step{{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Size: 16}, step(traces.OpRegister, live(0))},
			"scope_enter; alloc 16"},
		{"a dead target", []flat.Step{{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Size: 16}, {Op: traces.OpAlloc, Size: 16},
			step(traces.OpUnregister, live(1)), step(traces.OpRelease, live(1)), step(traces.OpAcquire, dead)},
			"scope_enter; alloc 16; alloc 16; unregister live[1]; release live[1]; acquire live[0]"},
		{"FORMAT.md's move into a struct is kept", []flat.Step{{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Size: 16},
			{Op: traces.OpStructInit, Size: 16, Fields: []flat.Ref{live(0)}}, step(traces.OpRelease, live(0)), step(traces.OpAcquire, live(0)), {Op: traces.OpScopeExit}},
			"scope_enter; alloc 16; struct_init 16 [live[0]]; release live[0]; scope_exit"},
		{"alloc with no scope", []flat.Step{{Op: traces.OpAlloc, Size: 16}}, ""},
		{"param_release of a name never held", []flat.Step{{Op: traces.OpParamRelease, Name: "w"}}, ""},
		{"a struct at NULL with a field", []flat.Step{{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Size: 16},
			{Op: traces.OpStructInit, Size: 0, Fields: []flat.Ref{live(0)}}},
			"scope_enter; alloc 16; struct_init 0 [null]"},
	}
	for _, c := range cases {
		got := drive.Correct(flat.Program{Steps: c.in})
		if s := fmtProgram(got); s != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, s, c.want)
		}
		if msg := correctUse(got); msg != "" {
			t.Errorf("%s: %s", c.name, msg)
		}
	}
}

func fmtProgram(p flat.Program) string {
	s := make([]string, len(p.Steps))
	for i, st := range p.Steps {
		s[i] = st.String()
	}
	return strings.Join(s, "; ")
}
