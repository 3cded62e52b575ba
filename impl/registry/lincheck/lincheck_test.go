package lincheck

import (
	"bytes"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/registry"
)

// Budgets: how many histories each fault may take to be caught, and how
// many a correct registry must pass.
const (
	huntHistories    = 200
	controlHistories = 300
)

// TestCorrectRegistryIsLinearizable: without a fault, every history is
// linearizable (many goroutines; run it under -race too).
func TestCorrectRegistryIsLinearizable(t *testing.T) {
	r, n, err := Hunt(Config{Seed: 1}, func(n int) bool { return n < controlHistories })
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != porcupine.Ok {
		t.Fatalf("history %d of the correct registry is %s:\n%s", n, r.Verdict, r)
	}
}

// TestEveryRegistryFaultIsCaught is the check's proof of power: each
// registry fault of the catalog, switched on alone, makes a history
// within the budget not linearizable.
func TestEveryRegistryFaultIsCaught(t *testing.T) {
	hunted := 0
	for _, fi := range impl.Catalog() {
		if fi.Engine != impl.EngineRegistry {
			continue
		}
		hunted++
		t.Run(string(fi.Name), func(t *testing.T) {
			cfg := Config{Seed: 1, Faults: []impl.Fault{fi.Name}}
			r, n, err := Hunt(cfg, func(n int) bool { return n < huntHistories })
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != porcupine.Illegal {
				t.Fatalf("fault %s escaped %d histories\ntrigger: %s", fi.Name, n, fi.Trigger)
			}
			t.Logf("caught by history %d (%d calls)", n, len(r.History))
			small := Shrink(cfg, r, 20)
			if small.Verdict != porcupine.Illegal || len(small.History) > len(r.History) {
				t.Fatalf("shrunk to a history that is %s, of %d calls", small.Verdict, len(small.History))
			}
			t.Logf("shrunk to %d calls:\n%s", len(small.History), small)
			var html bytes.Buffer
			if err := r.Visualize(&html); err != nil || !strings.Contains(html.String(), "<html") {
				t.Errorf("no visualization of the failure: %v", err)
			}
		})
	}
	if hunted != 3 {
		t.Errorf("%d registry faults in the catalog, want 3", hunted)
	}
}

// TestCountOutsideLockNeedsConcurrency: the count fault breaks atomicity
// only, so one goroutine alone stays linearizable; it is the concurrent
// histories that catch it.
func TestCountOutsideLockNeedsConcurrency(t *testing.T) {
	cfg := Config{Seed: 1, Clients: 1, Ops: 200, Faults: []impl.Fault{registry.FaultRegistryCountOutsideLock}}
	r, n, err := Hunt(cfg, func(n int) bool { return n < 50 })
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != porcupine.Ok {
		t.Fatalf("one goroutine: history %d is %s:\n%s", n, r.Verdict, r)
	}
}

func TestRunRefusesBadFaults(t *testing.T) {
	for _, f := range []impl.Fault{"no-such-fault", impl.FaultZSTAllocates} {
		if _, err := Run(Config{Faults: []impl.Fault{f}}, 1); err == nil || !strings.Contains(err.Error(), string(f)) {
			t.Errorf("fault %s: err %v, want one naming it", f, err)
		}
	}
}

// op builds a history entry of a sequential history: one call at a time.
func op(k int, in Input, out Output) porcupine.Operation {
	return porcupine.Operation{Input: in, Output: out, Call: int64(2 * k), Return: int64(2*k + 1)}
}

// TestModel holds the sequential model to the contract, and shows that it
// rejects: each history is sequential, so it is linearizable exactly when
// the model accepts every output.
func TestModel(t *testing.T) {
	buf := func(i int, k registry.Kind) Input { return Input{Op: OpRegisterBuffer, Slot: i, Kind: k} }
	al := func(real, a int) Input { return Input{Op: OpAlias, Slot: a, Real: real} }
	un := func(i int) Input { return Input{Op: OpUnregister, Slot: i} }
	freed := func(i int, k registry.Kind) Output {
		return Output{Freed: registry.Block{Ptr: Addr(i), Size: Size(i), Kind: k}}
	}
	ok := Output{}
	type call struct {
		in  Input
		out Output
	}
	tests := []struct {
		name  string
		calls []call
		legal bool
	}{
		{"plain frees at once", []call{{Input{Op: OpRegister, Slot: 0}, ok}, {un(0), freed(0, registry.KindHeap)}}, true},
		{"plain must free", []call{{Input{Op: OpRegister, Slot: 0}, ok}, {un(0), ok}}, false},
		{"last name frees with the kind", []call{{buf(1, registry.KindDevice), ok}, {al(1, 2), ok}, {un(1), ok}, {un(2), freed(1, registry.KindDevice)}}, true},
		{"wrong kind", []call{{buf(1, registry.KindDevice), ok}, {un(1), freed(1, registry.KindHeap)}}, false},
		{"an alias keeps the buffer", []call{{buf(1, 0), ok}, {al(1, 2), ok}, {un(1), freed(1, 0)}}, false},
		{"second unregister", []call{{buf(1, 0), ok}, {al(1, 2), ok}, {un(2), ok}, {un(2), Output{Err: ErrNotRegistered}}}, true},
		{"second unregister decrements", []call{{buf(1, 0), ok}, {al(1, 2), ok}, {un(2), ok}, {un(2), freed(1, 0)}}, false},
		{"held address", []call{{buf(1, 0), ok}, {al(1, 2), ok}, {un(1), ok}, {Input{Op: OpRegister, Slot: 1}, Output{Err: ErrHeld}}}, true},
		{"alias of a plain pointer", []call{{Input{Op: OpRegister, Slot: 0}, ok}, {al(0, 2), Output{Err: ErrNotBuffer}}}, true},
		{"alias of an alias", []call{{buf(1, 0), ok}, {al(1, 2), ok}, {al(2, 3), Output{Err: ErrNotBuffer}}}, true},
		{"alias of nothing", []call{{al(1, 2), Output{Err: ErrNotRegistered}}}, true},
		{"queries", []call{{buf(1, 0), ok}, {al(1, 2), ok}, {Input{Op: OpRegister, Slot: 0}, ok},
			{Input{Op: OpTotalBytes}, Output{Value: Size(0) + Size(1)}}, {Input{Op: OpPointers}, Output{Value: 3}},
			{Input{Op: OpBuffers}, Output{Value: 1}}, {Input{Op: OpIsRegistered, Slot: 2}, Output{Value: 1}}}, true},
		{"wrong total", []call{{buf(1, 0), ok}, {Input{Op: OpTotalBytes}, Output{Value: 0}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h []porcupine.Operation
			for k, c := range tt.calls {
				h = append(h, op(k, c.in, c.out))
			}
			if got := porcupine.CheckOperations(Model(), h); got != tt.legal {
				t.Errorf("linearizable = %v, want %v", got, tt.legal)
			}
		})
	}
}

// TestOverlapIsLegal: two overlapping calls may take effect in either
// order, so a history the model explains only with the later-invoked
// call first is still linearizable; the same calls one after the other
// are not.
func TestOverlapIsLegal(t *testing.T) {
	reg := Input{Op: OpRegister, Slot: 0}
	isReg := Input{Op: OpIsRegistered, Slot: 0}
	overlapping := []porcupine.Operation{
		{ClientId: 0, Input: isReg, Output: Output{Value: 1}, Call: 0, Return: 3},
		{ClientId: 1, Input: reg, Output: Output{}, Call: 1, Return: 2},
	}
	if !porcupine.CheckOperations(Model(), overlapping) {
		t.Error("overlapping calls: not linearizable")
	}
	sequential := []porcupine.Operation{op(0, isReg, Output{Value: 1}), op(1, reg, Output{})}
	if porcupine.CheckOperations(Model(), sequential) {
		t.Error("is_registered true before register: linearizable")
	}
}
