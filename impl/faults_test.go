package impl_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/registry"

	// Linked in so that the catalog holds their faults too, and
	// TestCatalog holds their rows whole.
	_ "github.com/tlcheck/tlcheck/impl/autograd"
	_ "github.com/tlcheck/tlcheck/impl/lang"
)

// faultTriggers holds, for every fault of the catalog, its trigger (the
// sequence its Trigger documents), a well-formed program, and the trace
// the faulty runtime records for it.
var faultTriggers = map[impl.Fault]struct {
	s     script
	trace string // recorded by the faulty runtime
}{
	impl.FaultStaleRecordNotPurged: {
		script{"enter", "a=alloc 64", "release a", "b=alloc 64", "param w b", "exit"},
		"scope_enter; alloc a 64; release a; free a; alloc b 64; param_register w b; scope_exit; free b"},
	impl.FaultScopeExitReleasesDead: {
		script{"enter", "a=alloc 64", "release a", "exit"},
		"scope_enter; alloc a 64; release a; free a; scope_exit; free a"},
	impl.FaultUnregisterReleases: {
		script{"enter", "a=alloc 64", "unregister a"},
		"scope_enter; alloc a 64; unregister a; free a"},
	impl.FaultUnregisterOldestRecord: {
		script{"enter", "a=alloc 64", "enter", "register a", "unregister a", "exit"},
		"scope_enter; alloc a 64; scope_enter; register a; unregister a; scope_exit; free a"},
	impl.FaultStructUnregisterDeep: {
		script{"enter", "t=alloc 16", "s=struct 16 t", "unregister s", "exit", "enter", "register s", "exit"},
		"scope_enter; alloc t 16; struct_init s 16 [t]; unregister s; scope_exit; scope_enter; register s; scope_exit; free s"},
	impl.FaultStructUnregisterNone: {
		script{"enter", "s=struct 16", "unregister s", "exit"},
		"scope_enter; struct_init s 16 []; unregister s; scope_exit; free s"},
	impl.FaultStructInitNoAcquire: {
		script{"enter", "t=alloc 16", "s=struct 16 t", "release t"},
		"scope_enter; alloc t 16; struct_init s 16 [t]; release t; free t"},
	impl.FaultStructDeathNoFieldRelease: {
		script{"enter", "t=alloc 16", "s=struct 16 t", "exit"},
		"scope_enter; alloc t 16; struct_init s 16 [t]; scope_exit; free s"},
	impl.FaultStructDeathFieldsOnly: {
		script{"enter", "s=struct 16", "release s"},
		"scope_enter; struct_init s 16 []; release s"},
	impl.FaultRegisterDuplicatesRecord: {
		script{"enter", "a=alloc 64", "param w a", "unregister a", "register a", "exit"},
		"scope_enter; alloc a 64; param_register w a; unregister a; register a; scope_exit; free a"},
	impl.FaultRegisterCountsNoRecord: {
		script{"enter", "a=alloc 64", "register a", "exit"},
		"scope_enter; alloc a 64; register a; scope_exit"},
	impl.FaultParamRegisterNoAcquire: {
		script{"enter", "a=alloc 64", "param w a", "exit"},
		"scope_enter; alloc a 64; param_register w a; scope_exit; free a"},
	impl.FaultParamReregisterNoRelease: {
		script{"enter", "a=alloc 64", "b=alloc 64", "param w a", "release a", "param w b"},
		"scope_enter; alloc a 64; alloc b 64; param_register w a; release a; param_register w b"},
	impl.FaultParamReregisterReleaseFirst: {
		script{"enter", "a=alloc 64", "param w a", "release a", "param w a"},
		"scope_enter; alloc a 64; param_register w a; release a; param_register w a; free a"},
	impl.FaultReleaseIgnoresZero: {
		script{"enter", "a=alloc 64", "release a"},
		"scope_enter; alloc a 64; release a"},
	impl.FaultZSTAllocates: {
		script{"enter", "y=alloc 0", "z=alloc 0"},
		"scope_enter; alloc y 0; alloc z 0"},
	impl.FaultHeapDoubleHandout: {
		script{"enter", "a=alloc 64", "release a", "b=alloc 64", "c=alloc 64"},
		"scope_enter; alloc a 64; release a; free a; alloc b 64; alloc c 64"},
	impl.FaultScopeExitOldestFirst: {
		script{"enter", "t=alloc 16", "s=struct 16 t", "release t", "exit"},
		"scope_enter; alloc t 16; struct_init s 16 [t]; release t; scope_exit; free t; free s"},
	impl.FaultArenaGrowFreesOld: {
		script{"fn 2", "x=get 0 16", "y=get 0 32", "z=get 1 16", "fnexit"},
		"fn_enter 2; arena_get 0 16 x@x; arena_get 0 32 y@y; arena_get 1 16 z@x; fn_exit"},
	impl.FaultPlannerSharesOverlapping: {
		script{"plan 0-1 1-1", "v0=get @0 16", "v1=get @1 16", "read v0", "fnexit"},
		"fn_enter 1; arena_get 0 16 v0@v0; arena_get 0 16 v1@v0; read v0@v0; fn_exit"},
	impl.FaultMethodWithoutFrame: {
		script{"method 1", "x=get 0 16", "fnexit"},
		"arena_get 0 16 x@null; fn_exit"},
	impl.FaultU8Count: {
		append(append(script{"enter", "a=alloc 16"}, repeat("acquire a", 256)...), "release a"),
		"scope_enter; alloc a 16; " + strings.Repeat("acquire a; ", 256) + "release a; free a"},
}

// repeat returns n copies of step, a long trigger's script.
func repeat(step string, n int) script {
	s := make(script, n)
	for i := range s {
		s[i] = step
	}
	return s
}

// runtimeFault reports whether f is a fault of Runtime's own calls, which
// its trigger shows: a program fault, or one only long programs show.
func runtimeFault(f impl.FaultInfo) bool {
	return f.Engine == impl.EngineProgram || f.Engine == impl.EngineDrive
}

// TestFaultsShow runs each fault's trigger on a correct runtime and on one
// with the fault on, and requires the fault to show: in the recorded
// trace, or in the errors or the State after some call. The correct run
// must be clean.
func TestFaultsShow(t *testing.T) {
	for _, f := range impl.Catalog() {
		if !runtimeFault(f) {
			continue // not Runtime's: its engine's package tests its trigger
		}
		t.Run(string(f.Name), func(t *testing.T) {
			trig, ok := faultTriggers[f.Name]
			if !ok {
				t.Fatalf("no trigger for fault %s", f.Name)
			}
			good := execute(t, impl.Config{}, true, trig.s)
			bad := execute(t, impl.Config{Faults: []impl.Fault{f.Name}}, false, trig.s)
			if got := bad.Trace(); got != trig.trace {
				t.Errorf("faulty trace:\n got %s\nwant %s", got, trig.trace)
			}
			if good.Trace() != bad.Trace() {
				return
			}
			for i := range trig.s {
				if fmt.Sprint(good.kinds[i]) != fmt.Sprint(bad.kinds[i]) {
					t.Logf("shows in the errors of %q: correct %v, faulty %v", trig.s[i], good.kinds[i], bad.kinds[i])
					return
				}
				if !reflect.DeepEqual(good.states[i], bad.states[i]) {
					t.Logf("shows in the State after %q: correct %s, faulty %s", trig.s[i],
						good.renderState(good.states[i]), bad.renderState(bad.states[i]))
					return
				}
			}
			t.Errorf("fault does not show: same trace and states as the correct runtime\n%s", good.Trace())
		})
	}
}

// TestCatalog checks the catalog's entries: unique names, every field
// written, a trigger that names the calls it makes.
func TestCatalog(t *testing.T) {
	seen := map[impl.Fault]bool{}
	program := 0
	for _, f := range impl.Catalog() {
		if seen[f.Name] {
			t.Errorf("fault %s listed twice", f.Name)
		}
		seen[f.Name] = true
		switch f.Engine {
		case impl.EngineProgram, impl.EngineDrive:
			program++
		case impl.EngineRegistry, impl.EngineSource, impl.EngineAutograd:
		case impl.EnginePool:
			if _, ok := poolTriggers[f.Name]; !ok {
				t.Errorf("pool fault %s has no trigger in poolTriggers", f.Name)
			}
		default:
			t.Errorf("fault %s: engine %q is none of the known ones", f.Name, f.Engine)
		}
		if f.Summary == "" || f.Bug == "" || f.Trigger == "" {
			t.Errorf("fault %s: summary, bug and trigger must all be written", f.Name)
		}
		if strings.Contains(f.Summary, "\n") {
			t.Errorf("fault %s: summary is not one line", f.Name)
		}
		got, ok := impl.LookupFault(string(f.Name))
		if !ok || !reflect.DeepEqual(got, f) {
			t.Errorf("LookupFault(%s) = %v, %v", f.Name, got, ok)
		}
	}
	if program != len(faultTriggers) {
		t.Errorf("%d program faults in the catalog, %d triggers in this test", program, len(faultTriggers))
	}
	if fmt.Sprint(impl.Catalog()) != fmt.Sprint(impl.Catalog()) {
		t.Error("Catalog's order is not stable")
	}
	if _, ok := impl.LookupFault("no-such-fault"); ok {
		t.Error("LookupFault found a fault the catalog lacks")
	}
}

// TestHasFault: HasFault answers for every fault, on and off, and a
// runtime with one fault has no other.
func TestHasFault(t *testing.T) {
	var runtimes []impl.Fault
	for _, f := range impl.Catalog() {
		if !runtimeFault(f) && f.Engine != impl.EngineSource && f.Engine != impl.EngineAutograd {
			continue // not Runtime's to have: Config refuses it
		}
		runtimes = append(runtimes, f.Name)
		if impl.New(impl.Config{}).HasFault(f.Name) {
			t.Errorf("%s on in a correct runtime", f.Name)
		}
	}
	for _, on := range runtimes {
		rt := impl.New(impl.Config{Faults: []impl.Fault{on}})
		for _, f := range impl.Catalog() {
			if got := rt.HasFault(f.Name); got != (f.Name == on) {
				t.Errorf("a runtime with %s: HasFault(%s) = %v", on, f.Name, got)
			}
		}
		if rt.HasFault("no-such-fault") {
			t.Errorf("a runtime with %s has a fault the catalog lacks", on)
		}
	}
	if impl.New(impl.Config{}).HasFault("no-such-fault") {
		t.Error("HasFault found a fault the catalog lacks")
	}
}

func TestConfigValidate(t *testing.T) {
	if err := (impl.Config{Faults: []impl.Fault{impl.FaultZSTAllocates}}).Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
	if err := (impl.Config{Reuse: 7}).Validate(); err == nil {
		t.Error("Validate accepted reuse policy 7")
	}
	other := impl.Config{Faults: []impl.Fault{registry.FaultRegistryAliasUnderflow}}
	if err := other.Validate(); err == nil || !strings.Contains(err.Error(), "registry-alias-underflow belongs to the registry engine") {
		t.Errorf("Validate of a registry fault = %v, want an error naming it and its engine", err)
	}
	bad := impl.Config{Faults: []impl.Fault{"no-such-fault"}}
	err := bad.Validate()
	if err == nil || !strings.Contains(err.Error(), `"no-such-fault"`) {
		t.Fatalf("Validate = %v, want an error naming the fault", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("New accepted an unknown fault")
		}
	}()
	impl.New(bad)
}

// TestFaultAlso: the engines a fault is also caught by are known ones,
// not its own, and CaughtBy agrees with Engine and Also.
func TestFaultAlso(t *testing.T) {
	known := impl.Engines()
	also := 0
	for _, f := range impl.Catalog() {
		if !f.CaughtBy(f.Engine) {
			t.Errorf("fault %s: not caught by its own engine %s", f.Name, f.Engine)
		}
		for _, e := range f.Also {
			also++
			if e == f.Engine || !slices.Contains(known, e) {
				t.Errorf("fault %s: also caught by %q: want a known engine other than its own (%s)", f.Name, e, f.Engine)
			}
			if !f.CaughtBy(e) {
				t.Errorf("fault %s: CaughtBy(%s) is false though Also lists it", f.Name, e)
			}
		}
	}
	for _, name := range []impl.Fault{impl.FaultPlannerSharesOverlapping, impl.FaultArenaGrowFreesOld} {
		if f, _ := impl.LookupFault(string(name)); !f.CaughtBy(impl.EngineSource) {
			t.Errorf("fault %s: source programs catch it, the catalog does not say so", name)
		}
	}
	if also == 0 {
		t.Error("no fault is caught by a second engine")
	}
}
