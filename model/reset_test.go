package model

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tlcheck/tlcheck/model/internal/index"
	"github.com/tlcheck/tlcheck/traces"
)

// TestResetIsNew: whatever a field of Checker holds, Reset leaves it as
// New does. Each field in turn is set, after a trace has filled the
// Checker's memory, to a value unlike New's; Reset must bring it back
// (slices and maps may keep their memory, emptied). A field added to
// Checker that Reset keeps but does not empty fails here by name. Its
// memory (the index) is the one field not poked, since a poked index is no index: the
// index's own tests hold its Reset to a new index, and
// TestResetChecksLikeNew holds the Checker's.
func TestResetIsNew(t *testing.T) {
	h := traces.Header{}
	want := New(h)
	ct := reflect.TypeFor[Checker]()
	for i := range ct.NumField() {
		f := ct.Field(i)
		if f.Name == "mem" {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			c := New(traces.Header{Effects: true})
			stepRandom(c, rand.New(rand.NewPCG(uint64(i), 3)), 300)
			c.Close()
			v := field(c, i)
			v.Set(nonZero(f.Type, 0))
			if cmp.Equal(field(want, i).Interface(), v.Interface(), resetOpts) {
				t.Fatalf("Checker.%s: the value the test sets is New's; it cannot tell whether Reset resets the field", f.Name)
			}
			c.Reset(h)
			if d := cmp.Diff(field(want, i).Interface(), field(c, i).Interface(), resetOpts); d != "" {
				t.Errorf("Checker.%s: after Reset it is not as New leaves it (-new +reset):\n%s", f.Name, d)
			}
		})
	}
}

// resetOpts compare Checker fields: unexported fields too, nil and empty
// alike (Reset keeps an emptied slice's or map's memory).
var resetOpts = cmp.Options{cmp.Exporter(func(reflect.Type) bool { return true }), cmpopts.EquateEmpty()}

// field returns c's field i, settable though unexported.
func field(c *Checker, i int) reflect.Value {
	f := reflect.ValueOf(c).Elem().Field(i)
	return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
}

// nonZero returns a value of type t that is neither zero nor empty: each
// field of a struct, the first element of an array, one element of a
// slice or map, a pointer to a zero value. Below a few levels, slices and
// maps are left empty, so that recursive types end.
func nonZero(t reflect.Type, depth int) reflect.Value {
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		if depth < 3 {
			v.SetMapIndex(nonZero(t.Key(), depth+1), nonZero(t.Elem(), depth+1))
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(t, 0, 1))
		if depth < 3 {
			v.Set(reflect.Append(v, nonZero(t.Elem(), depth+1)))
		}
	case reflect.Array:
		if t.Len() > 0 {
			v.Index(0).Set(nonZero(t.Elem(), depth+1))
		}
	case reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
	case reflect.Struct:
		for i := range t.NumField() {
			f := v.Field(i)
			reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(nonZero(f.Type(), depth+1))
		}
	case reflect.Func:
		v.Set(reflect.MakeFunc(t, func([]reflect.Value) []reflect.Value {
			out := make([]reflect.Value, t.NumOut())
			for i := range out {
				out[i] = reflect.Zero(t.Out(i))
			}
			return out
		}))
	case reflect.String:
		v.SetString("x")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Interface:
		// Left nil: a struct has other fields, and a Checker field of
		// interface type fails TestResetIsNew's first check, to be given
		// a case here.
	default:
		panic("nonZero: no value for kind " + t.Kind().String())
	}
	return v
}

// TestResetChecksLikeNew runs random traces, mostly wrong ones, through
// one Checker, Reset before each, and through a new Checker each, side by
// side: every step's violations and error, the state and the report at
// the end, and what Close returns must be the same. A trace may stop with
// frames and scopes open, things live and frees due, and without Close,
// so that the next trace starts over whatever the last one left.
func TestResetChecksLikeNew(t *testing.T) {
	reused := New(traces.Header{})
	for seed := range uint64(250) {
		rng := rand.New(rand.NewPCG(seed, 5))
		h := traces.Header{Effects: seed%2 == 0}
		reused.Reset(h)
		if err := reused.mem.ix.Check(); err != nil {
			t.Fatalf("seed %d: reset index: %v", seed, err)
		}
		for sp := range nSpaces {
			if things, cells := reused.mem.ix.Size(index.Space(sp)); things != 0 || cells != 0 {
				t.Fatalf("seed %d: the reset index keeps %d things in %d cells of space %d", seed, things, cells, sp)
			}
		}
		fresh := New(h)
		evs := randomEvents(rng, 20+rng.IntN(300))
		for i := range evs {
			where := fmt.Sprintf("seed %d event %d (%v)", seed, i, evs[i].Op)
			ev1, ev2 := evs[i], evs[i]
			pos := traces.Pos{Event: i, Line: i + 2}
			vs1, err1 := reused.Step(&ev1, pos)
			vs2, err2 := fresh.Step(&ev2, pos)
			if d := cmp.Diff(vs2, vs1, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("%s: violations (-new +reset):\n%s", where, d)
			}
			if fmt.Sprint(err1) != fmt.Sprint(err2) {
				t.Fatalf("%s: a reset checker says %v, a new one %v", where, err1, err2)
			}
			if i%32 == 0 {
				if d := cmp.Diff(fresh.State(), reused.State(), cmpopts.EquateEmpty()); d != "" {
					t.Fatalf("%s: state (-new +reset):\n%s", where, d)
				}
			}
		}
		if d := cmp.Diff(fresh.State(), reused.State(), cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("seed %d: state at the last event (-new +reset):\n%s", seed, d)
		}
		if d := cmp.Diff(fresh.Report(), reused.Report()); d != "" {
			t.Fatalf("seed %d: report (-new +reset):\n%s", seed, d)
		}
		if rng.IntN(3) > 0 {
			if d := cmp.Diff(fresh.Close(), reused.Close(), cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("seed %d: close (-new +reset):\n%s", seed, d)
			}
		}
	}
}

// randomEvents returns n random events of every op, over a few addresses
// in both spaces, with few names, slots and variables, so that things are
// reused, frames and scopes nest, and most events are misuses. Half the
// events are of a few ops drawn for the trace, so that each trace goes
// deep into some layer.
func randomEvents(rng *rand.Rand, n int) []traces.Event {
	ops := traces.Ops()
	focus := make([]traces.Op, 4)
	for i := range focus {
		focus[i] = ops[rng.IntN(len(ops))]
	}
	addr := func() traces.Addr {
		if rng.IntN(10) == 0 {
			return 0
		}
		return traces.Addr(0x1000 + 0x40*rng.IntN(12) + rng.IntN(2)*8)
	}
	names := []string{"a", "b"}
	kinds := []string{"", "data", "grad"}
	evs := make([]traces.Event, 0, n)
	for i := range n {
		op := ops[rng.IntN(len(ops))]
		if rng.IntN(2) == 0 {
			op = focus[rng.IntN(len(focus))]
		}
		ev := traces.Event{Op: op, Addr: addr(), NewAddr: addr(),
			Size: uint64(rng.IntN(200)), HasSize: rng.IntN(2) == 0, Name: names[rng.IntN(2)],
			Slots: rng.IntN(6), Slot: rng.IntN(7) - 1, Var: names[rng.IntN(2)],
			Kind: kinds[rng.IntN(len(kinds))], Site: fmt.Sprint("r.tl:", i%9)}
		if rng.IntN(4) == 0 {
			ev.Space = traces.SpaceDevice
		}
		if ev.Op == traces.OpStructInit {
			ev.Fields = []traces.Addr{addr(), addr()}
		}
		if ev.Op == traces.OpEnd && rng.IntN(4) > 0 {
			continue // keep end rare, so that most traces stop with things open
		}
		evs = append(evs, ev)
	}
	return evs
}

// stepRandom steps n random events through c, whatever they say.
func stepRandom(c *Checker, rng *rand.Rand, n int) {
	evs := randomEvents(rng, n)
	for i := range evs {
		c.Step(&evs[i], traces.Pos{Event: i, Line: i + 2})
	}
}
