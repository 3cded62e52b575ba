package properties

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// TestCorrectRuntimePasses runs generated programs against the runtime with
// no fault, under both reuse policies: no property may break.
func TestCorrectRuntimePasses(t *testing.T) {
	const programs = 400
	for _, reuse := range []impl.Reuse{impl.ReuseLIFO, impl.ReuseFIFO} {
		t.Run(reuseName(reuse), func(t *testing.T) {
			p, f, n := Search(impl.Config{Reuse: reuse}, 7, func(n int) bool { return n < programs })
			if f != nil {
				t.Fatalf("program %d failed: %v\nprogram:\n%v\ntrace:\n%s", n, f, p, traceText(f.Result))
			}
		})
	}
}

// TestGeneratedProgramsAreMostlyWellFormed measures the share of calls the
// correct runtime refuses: misuse must be present but rare, and programs
// must reach deep enough to matter.
func TestGeneratedProgramsAreMostlyWellFormed(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	calls, refused, frees := 0, 0, 0
	for range 300 {
		res, f := Run(Generate(r), impl.Config{})
		if f != nil {
			t.Fatal(f)
		}
		for _, c := range res.Calls[:len(res.Program.Steps)] {
			calls++
			if c.Err != nil {
				refused++
			}
		}
		for _, ev := range res.Trace {
			if ev.Op == traces.OpFree {
				frees++
			}
		}
	}
	share := float64(refused) / float64(calls)
	t.Logf("%d calls, %.1f%% refused as misuse, %d frees", calls, 100*share, frees)
	if share < 0.02 || share > 0.15 {
		t.Errorf("misuse is %.1f%% of calls, want between 2%% and 15%%", 100*share)
	}
	if frees < calls/10 {
		t.Errorf("only %d frees in %d calls: programs hardly let objects die", frees, calls)
	}
}

// TestShrinkOfPassingProgram: nothing to shrink, and Shrink says so.
func TestShrinkOfPassingProgram(t *testing.T) {
	p := Program{Steps: []flat.Step{{Op: traces.OpScopeEnter}, {Op: traces.OpAlloc, Size: 16}}}
	got, f := Shrink(p, impl.Config{})
	if f != nil || !cmp.Equal(got, p) {
		t.Errorf("Shrink of a passing program = %v, %v; want it back and nil", got, f)
	}
}

// TestSameStateAgreesWithCmp holds the fast state comparison to go-cmp's
// verdict, on the states of real runs and on each of them changed a little.
func TestSameStateAgreesWithCmp(t *testing.T) {
	var states []traces.State
	r := rand.New(rand.NewPCG(9, 9))
	for range 8 {
		s := newSession(impl.Config{}, Program{})
		for _, st := range Generate(r).Steps {
			s.apply(st)
			states = append(states, s.chk.State(), s.rt.State()) // fresh: s.state is refilled
		}
	}
	mutants := func(st traces.State) []traces.State {
		var out []traces.State
		for a := range st.Objects {
			m := cloneState(st)
			m.Objects[a]++
			out = append(out, m)
			m = cloneState(st)
			delete(m.Objects, a)
			out = append(out, m)
		}
		for i := range st.Scopes {
			m := cloneState(st)
			m.Scopes[i] = append(m.Scopes[i], 0x10)
			out = append(out, m)
		}
		m := cloneState(st)
		m.Scopes = append(m.Scopes, nil)
		out = append(out, m)
		m = cloneState(st)
		m.Params["zz"] = 0x10
		return append(out, m, traces.State{})
	}
	for i, a := range states {
		b := states[(i*7+3)%len(states)]
		for _, c := range append(mutants(a), b) {
			if got, want := sameState(a, c), cmp.Equal(a, c, stateOpts); got != want {
				t.Fatalf("sameState = %v, cmp.Equal = %v for\n%#v\n%#v", got, want, a, c)
			}
		}
	}
}

// TestMatchesIsSameState holds impl.Runtime.Matches, the comparison
// compare makes after every call, to sameState on the runtime's state
// made: after every call of programs under every program fault of the
// catalog and none, against the model's state, each of its near misses
// (stateMutants) and the state of another run.
func TestMatchesIsSameState(t *testing.T) {
	cfgs := []impl.Config{{}, {Reuse: impl.ReuseFIFO}}
	for _, fi := range impl.Catalog() {
		if fi.Engine == impl.EngineProgram {
			cfgs = append(cfgs, impl.Config{Faults: []impl.Fault{fi.Name}})
		}
	}
	r := rand.New(rand.NewPCG(10, 10))
	other := traces.State{}
	differ := 0
	for i := range 4 * len(cfgs) {
		s := newSession(cfgs[i%len(cfgs)], Program{})
		for _, st := range Generate(r).Steps {
			s.apply(st)
			got := s.rt.State()
			for _, want := range append(stateMutants(s.chk.State()), other) {
				m := s.rt.Matches(&want)
				if m != sameState(got, want) {
					t.Fatalf("under %v after %v: Matches says %v, sameState %v for\n%#v\n%#v", cfgs[i%len(cfgs)].Faults, st, m, !m, got, want)
				}
				if !m {
					differ++
				}
			}
			other = got
		}
	}
	if differ == 0 {
		t.Fatal("no state differed: the test did not hold Matches to a difference")
	}
}

// stateMutants returns st and each of its near misses: a count one more,
// an object missing, a record more in a scope, a scope more, a parameter
// more, and the empty state.
func stateMutants(st traces.State) []traces.State {
	out := []traces.State{st}
	for a := range st.Objects {
		m := cloneState(st)
		m.Objects[a]++
		out = append(out, m)
		m = cloneState(st)
		delete(m.Objects, a)
		out = append(out, m)
	}
	for i := range st.Scopes {
		m := cloneState(st)
		m.Scopes[i] = append(m.Scopes[i], 0x10)
		out = append(out, m)
		if len(st.Scopes[i]) > 0 {
			m = cloneState(st)
			m.Scopes[i] = m.Scopes[i][1:]
			out = append(out, m)
		}
	}
	m := cloneState(st)
	m.Scopes = append(m.Scopes, nil)
	out = append(out, m)
	m = cloneState(st)
	m.Params["zz"] = 0x10
	out = append(out, m)
	for n := range st.Params {
		m = cloneState(st)
		m.Params[n]++
		out = append(out, m)
	}
	return append(out, traces.State{})
}

func cloneState(st traces.State) traces.State {
	c := traces.State{Objects: map[traces.Addr]int{}, Params: map[string]traces.Addr{}}
	for k, v := range st.Objects {
		c.Objects[k] = v
	}
	for k, v := range st.Params {
		c.Params[k] = v
	}
	for _, s := range st.Scopes {
		c.Scopes = append(c.Scopes, slices.Clone(s))
	}
	return c
}

// TestEachPropertyNamesItself: every property breaks on the verdicts it
// owns, names itself in its breach, and ignores explained ones.
func TestEachPropertyNamesItself(t *testing.T) {
	r := &Result{
		Trace: []traces.Event{{Op: traces.OpRelease, Addr: 0x10}, {Op: traces.OpFree, Addr: 0x10}},
		Calls: []Call{{Step: flat.Step{Op: traces.OpRelease}, Event: 0}},
	}
	owns := map[string]traces.Kind{
		"NoDoubleFree": traces.DoubleFree, "NoUseAfterFree": traces.UseAfterFree,
		"NoPrematureFree": traces.PrematureFree, "NoStaleReuse": traces.StaleReuse,
		"NoLeak": traces.Leak, "Refines": traces.Overlap,
	}
	for _, p := range Properties() {
		k, ok := owns[p.Name]
		if !ok {
			t.Fatalf("property %s: no test case", p.Name)
		}
		v := traces.Violation{Kind: k, Event: 1}
		r.Verdicts = []Verdict{{Violation: v, Explained: true}}
		if err := p.Check(r); err != nil {
			t.Errorf("%s breaks on an explained %s: %v", p.Name, k, err)
		}
		r.Verdicts[0].Explained = false
		b := p.Check(r)
		if b == nil || b.Property != p.Name || b.Event != 1 {
			t.Errorf("%s on an unexplained %s = %#v, want a breach named %s at event 1", p.Name, k, b, p.Name)
		}
	}
	// A count the trace states that is not the model's is the runtime's
	// books differing from the model's, as the trace shows them.
	r.Verdicts = []Verdict{{Violation: traces.Violation{Kind: traces.CountMismatch, Event: 0}}}
	if b := Refines(r); b == nil || b.Property != "Refines" {
		t.Errorf("Refines on an unexplained count-mismatch = %#v, want its breach", b)
	}
	r.Verdicts = nil
	r.Mismatches = []Mismatch{{Call: 0, Kind: MismatchState, What: "differs"}}
	if b := Refines(r); b == nil || b.Message != "differs" {
		t.Errorf("Refines on a mismatch = %v, want its breach", b)
	}
}

// TestSameStateSeesEveryField: a state that differs from another in any
// one field of traces.State, however that field is typed, is a different
// state to sameState as to go-cmp. A field added to State and left out of
// sameState fails here by name.
func TestSameStateSeesEveryField(t *testing.T) {
	st := reflect.TypeFor[traces.State]()
	for i := range st.NumField() {
		f := st.Field(i)
		base, changed := traces.State{}, traces.State{}
		reflect.ValueOf(&changed).Elem().Field(i).Set(nonZero(f.Type))
		if sameState(base, changed) {
			t.Errorf("traces.State.%s: sameState does not compare it", f.Name)
		}
		if cmp.Equal(base, changed, stateOpts) {
			t.Errorf("traces.State.%s: stateOpts make go-cmp ignore it", f.Name)
		}
	}
}

// nonZero returns a value of type t that is neither zero nor empty.
func nonZero(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		v.SetMapIndex(nonZero(t.Key()), nonZero(t.Elem()))
	case reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(t, 0, 1), nonZero(t.Elem())))
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Struct:
		for i := range t.NumField() {
			if v.Field(i).CanSet() {
				v.Field(i).Set(nonZero(t.Field(i).Type))
			}
		}
	default:
		panic("nonZero: no value for kind " + t.Kind().String())
	}
	return v
}
