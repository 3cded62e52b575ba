package properties

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// rapidProperty is the state-machine property in rapid's terms: T.Repeat
// draws actions, one per call of the runtime's API, each applied to the
// runtime and the model; after every action the check compares their
// states with go-cmp and fails on any breach; at the end the run is torn
// down and the end-of-run properties checked.
func rapidProperty(cfg impl.Config) func(*rapid.T) {
	return func(t *rapid.T) {
		s := newSession(cfg, Program{})
		ref := func(t *rapid.T, label string) Ref {
			pick := Live
			switch rapid.IntRange(0, 15).Draw(t, label+"_pick") {
			case 0:
				pick = Dead
			case 1:
				pick = Null
			}
			return Ref{Pick: pick, Index: uint8(rapid.IntRange(0, 7).Draw(t, label))}
		}
		size := rapid.SampledFrom(sizeTable[:])
		name := rapid.SampledFrom(Names)
		target := func(op traces.Op) func(*rapid.T) {
			return func(t *rapid.T) { s.apply(Step{Op: op, Target: ref(t, "target")}) }
		}
		t.Repeat(map[string]func(*rapid.T){
			"scope_enter": func(t *rapid.T) { s.apply(Step{Op: traces.OpScopeEnter}) },
			"scope_exit":  func(t *rapid.T) { s.apply(Step{Op: traces.OpScopeExit}) },
			"alloc":       func(t *rapid.T) { s.apply(Step{Op: traces.OpAlloc, Size: size.Draw(t, "size")}) },
			"struct_init": func(t *rapid.T) {
				st := Step{Op: traces.OpStructInit, Size: size.Draw(t, "size")}
				for i := range rapid.IntRange(0, 3).Draw(t, "fields") {
					st.Fields = append(st.Fields, ref(t, fmt.Sprint("field", i)))
				}
				s.apply(st)
			},
			"acquire":    target(traces.OpAcquire),
			"release":    target(traces.OpRelease),
			"register":   target(traces.OpRegister),
			"unregister": target(traces.OpUnregister),
			"param_register": func(t *rapid.T) {
				s.apply(Step{Op: traces.OpParamRegister, Name: name.Draw(t, "name"), Target: ref(t, "target")})
			},
			"param_release": func(t *rapid.T) {
				s.apply(Step{Op: traces.OpParamRelease, Name: name.Draw(t, "name")})
			},
			"": func(t *rapid.T) {
				if d := cmp.Diff(s.rt.State(), s.chk.State(), stateOpts); d != "" {
					t.Fatalf("state differs (-runtime +model):\n%s", d)
				}
				if b, _ := check(s.res); b != nil {
					t.Fatalf("%v\n%s", b, traceText(s.res))
				}
			},
		})
		if b, _ := check(s.finish()); b != nil {
			t.Fatalf("%v\n%s", b, traceText(s.res))
		}
	}
}

func TestRapidRefines(t *testing.T) {
	for _, reuse := range []impl.Reuse{impl.ReuseLIFO, impl.ReuseFIFO} {
		t.Run(reuseName(reuse), rapid.MakeCheck(rapidProperty(impl.Config{Reuse: reuse})))
	}
}

func reuseName(r impl.Reuse) string {
	if r == impl.ReuseFIFO {
		return "FIFO"
	}
	return "LIFO"
}
