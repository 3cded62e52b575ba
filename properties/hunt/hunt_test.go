package hunt

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/impl"
	// The engines' packages declare their faults: linked in, the catalog
	// is whole.
	_ "github.com/tlcheck/tlcheck/impl/autograd"
	_ "github.com/tlcheck/tlcheck/impl/gpu"
)

// TestHuntsEveryEngine: every engine of the catalog has a hunter; a fault
// whose engine has none would be reported "no engine hunts ... faults"
// and never caught. Each hunter's language is whole (harness.Language's
// Missing), measures in one of hunt's units, and has faults of the
// catalog to catch: CONTRIBUTING's steps for a new program language.
func TestHuntsEveryEngine(t *testing.T) {
	for _, f := range impl.Catalog() {
		if _, ok := engineNamed(f.Engine); !ok {
			t.Errorf("fault %s: no engine hunts %s faults (add the engine to engines, hunt.go)", f.Name, f.Engine)
		}
	}
	for _, en := range engines {
		if en.unit == "" || en.search == nil || en.tally == nil || en.missing == nil {
			t.Errorf("engine %s: unit %q, search, tally and missing set %t, %t, %t: want all four", en.name, en.unit, en.search != nil, en.tally != nil, en.missing != nil)
			continue
		}
		if !slices.Contains([]string{UnitEvents, UnitStatements, UnitCalls, UnitSteps}, en.unit) {
			t.Errorf("engine %s: unit %q is none of hunt's Unit constants (add it beside them, hunt.go)", en.name, en.unit)
		}
		if m := en.missing(); len(m) > 0 {
			t.Errorf("engine %s: its language lacks %v (see harness.Language)", en.name, m)
		}
		// A language no fault of the catalog exercises proves nothing:
		// its proof of power is the faults it catches.
		if !slices.ContainsFunc(impl.Catalog(), func(f impl.FaultInfo) bool { return f.Engine == en.name }) {
			t.Errorf("engine %s: no fault of impl.Catalog has it as its Engine (add the faults it must catch)", en.name)
		}
	}
	r := Fault(impl.FaultInfo{Name: "x", Engine: "no-such-engine"}, Options{Budget: time.Millisecond})
	if r.Caught || r.Property != "no engine hunts no-such-engine faults" {
		t.Errorf("a fault of an unknown engine: %+v, want not caught and the engine named", r)
	}
}

// TestAutograd: each autograd fault is caught by the autograd hunter,
// shrunk to a few steps; the correct engine is not.
func TestAutograd(t *testing.T) {
	opts := Options{Seed: 1, Budget: 2 * time.Second}
	for _, f := range impl.Catalog() {
		if f.Engine != impl.EngineAutograd {
			continue
		}
		r := Fault(f, opts)
		if !r.Caught || r.Events <= 0 || r.Unit != UnitSteps || r.Size <= 0 || r.Size > 8 || r.Counterexample == "" {
			t.Errorf("fault %s: %+v; want caught, shrunk to at most 8 steps", f.Name, r)
		}
	}
	en, _ := engineNamed(impl.EngineAutograd)
	if c := en.hunt(nil, Options{Seed: 1, Budget: 200 * time.Millisecond}); c.Caught || c.Programs == 0 {
		t.Errorf("control: %+v; want programs run and none failing", c)
	}
}

// TestLong: each fault of the drive engine (u8-count: a count kept in a
// byte) is caught by drive's long programs in process, and shrunk.
func TestLong(t *testing.T) {
	opts := Options{Seed: 1, Budget: 5 * time.Second}
	n := 0
	for _, f := range impl.Catalog() {
		if f.Engine != impl.EngineDrive {
			continue
		}
		n++
		r := Fault(f, opts)
		if !r.Caught || r.Unit != UnitEvents || r.Size <= 0 || r.Counterexample == "" {
			t.Errorf("fault %s: %+v; want caught", f.Name, r)
		}
		t.Logf("fault %s: caught after %d programs, a trace of %d events (%s)", f.Name, r.Programs, r.Size, r.Property)
	}
	if n == 0 {
		t.Error("no fault of the drive engine in the catalog")
	}
}

// TestUnits: each engine's counterexample comes in its own unit, and is
// the thing itself: a trace for a program fault, a source program, a
// pool program, a history.
func TestUnits(t *testing.T) {
	opts := Options{Seed: 1, Budget: 5 * time.Second}
	for _, tt := range []struct {
		fault string
		unit  string
		has   string // in the counterexample
	}{
		{"zst-allocates", UnitEvents, `{"format":"tlcheck-trace"`},
		{"block-result-freed", UnitStatements, "zeros("},
		{"pool-stats-drift", UnitCalls, "malloc"},
		{"registry-alias-underflow", UnitCalls, "client "},
	} {
		f, ok := impl.LookupFault(tt.fault)
		if !ok {
			t.Fatalf("no fault %s", tt.fault)
		}
		r := Fault(f, opts)
		if !r.Caught || r.Unit != tt.unit || r.Size <= 0 || !strings.Contains(r.Counterexample, tt.has) {
			t.Errorf("fault %s: caught %t, size %d %s, counterexample %q; want %s, with %q", tt.fault, r.Caught, r.Size, r.Unit, r.Counterexample, tt.unit, tt.has)
		}
	}
}

// TestControl: the control runs every engine on the correct code, none
// fails, and each engine's run is counted where the report reads it.
func TestControl(t *testing.T) {
	c := RunControl(Options{Seed: 1, Budget: 200 * time.Millisecond})
	if c.Failed || c.Programs == 0 || c.Seconds <= 0 || c.Histories == 0 || c.HistSeconds <= 0 || c.Pool == 0 || c.Autograd == 0 || c.Long == 0 {
		t.Errorf("control %+v: want no failure and every engine's programs counted", c)
	}
}
