package properties

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/flat"
)

// rapidProperty is the state-machine property in rapid's terms: T.Repeat
// draws actions, one per call of the runtime's API, each applied to the
// runtime and the model (a sure misuse mostly turned into the call that
// avoids it, as Decode does, so that layer 3's calls meet frames); after every action the check compares their
// states with go-cmp and fails on any breach; at the end the run is torn
// down and the end-of-run properties checked.
func rapidProperty(cfg impl.Config) func(*rapid.T) {
	return func(t *rapid.T) {
		s := newSession(cfg, Program{})
		var sh flat.Shape
		actions := map[string]func(*rapid.T){}
		for _, op := range flat.Ops() {
			actions[op.String()] = func(t *rapid.T) {
				// As the decoder does: a call sure to be a misuse
				// becomes, three times in four, the call that avoids it.
				made := op
				if sure, instead := sh.Misuse(op); sure && rapid.IntRange(0, 3).Draw(t, "keep_misuse") != 0 {
					made = instead
				}
				st := flat.Step{Op: made}
				for _, o := range flat.CallOf(made).Operands() {
					drawOperand(t, o, &st)
				}
				s.apply(st)
				sh = sh.After(st)
			}
		}
		actions[""] = func(t *rapid.T) {
			if d := cmp.Diff(s.rt.State(), s.chk.State(), stateOpts); d != "" {
				t.Fatalf("state differs (-runtime +model):\n%s", d)
			}
			if b, _ := check(s.res); b != nil {
				t.Fatalf("%v\n%s", b, traceText(s.res))
			}
		}
		t.Repeat(actions)
		if b, _ := check(s.finish()); b != nil {
			t.Fatalf("%v\n%s", b, traceText(s.res))
		}
	}
}

// drawOperand draws operand o of a step with rapid's generators: a ref is
// mostly a live object, sometimes a dead address or NULL.
func drawOperand(t *rapid.T, o flat.Operand, st *flat.Step) {
	ref := func(label string) flat.Ref {
		pick := flat.Live
		switch rapid.IntRange(0, 15).Draw(t, label+"_pick") {
		case 0:
			pick = flat.Dead
		case 1:
			pick = flat.Null
		}
		return flat.Ref{Pick: pick, Index: uint8(rapid.IntRange(0, 7).Draw(t, label))}
	}
	switch o {
	case flat.OperandSize:
		st.Size = rapid.SampledFrom(flat.Sizes()).Draw(t, "size")
	case flat.OperandFields:
		for i := range rapid.IntRange(0, 3).Draw(t, "fields") {
			st.Fields = append(st.Fields, ref(fmt.Sprint("field", i)))
		}
	case flat.OperandTarget:
		st.Target = ref("target")
	case flat.OperandName, flat.OperandHeldName:
		st.Name = rapid.SampledFrom(flat.Names()).Draw(t, "name")
	case flat.OperandKind:
		st.Method = rapid.IntRange(0, 3).Draw(t, "kind") == 3
	case flat.OperandLives:
		st.Lives = rapid.SliceOfN(rapid.SampledFrom(flat.Lifetimes()), 0, flat.MaxVars).Draw(t, "lives")
	case flat.OperandVar:
		st.Var = rapid.Uint8Range(0, flat.MaxVars-1).Draw(t, "var")
	default:
		panic(fmt.Sprintf("drawOperand: no generator for operand %s", o))
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
