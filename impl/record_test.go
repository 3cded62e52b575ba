package impl_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

func TestRecordingSource(t *testing.T) {
	var rec impl.Recording
	rt := impl.New(impl.Config{Record: rec.Record})
	_ = rt.ScopeEnter()
	fields := []traces.Addr{0}
	s, _ := rt.StructInit(16, fields)
	fields[0] = 0xbad // the recorded event keeps its own copy
	_ = rt.ScopeExit()
	_ = rt.End()

	want := []traces.Event{
		{Op: traces.OpScopeEnter},
		{Op: traces.OpStructInit, Addr: s, Size: 16, Fields: []traces.Addr{0}, Count: 1, HasCount: true},
		{Op: traces.OpScopeExit},
		{Op: traces.OpFree, Addr: s},
		{Op: traces.OpEnd},
	}
	if !reflect.DeepEqual(rec.Events(), want) {
		t.Fatalf("events:\n got %+v\nwant %+v", rec.Events(), want)
	}

	src := rec.Source()
	if h := src.Header(); h != impl.Header() || !h.Effects {
		t.Errorf("header %+v, want impl.Header() with effects", h)
	}
	var got []traces.Event
	for {
		var ev traces.Event
		err := src.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if p := src.Pos(); p.Event != len(got) {
			t.Errorf("Pos().Event = %d, want %d", p.Event, len(got))
		}
		got = append(got, ev)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("source gave %+v, want %+v", got, want)
	}

	rec.Reset()
	if n := len(rec.Events()); n != 0 {
		t.Errorf("%d events after Reset", n)
	}
}

// TestOutOfMemory checks that a size the heap cannot serve is refused
// before anything happens: no object, no event.
func TestOutOfMemory(t *testing.T) {
	var rec impl.Recording
	rt := impl.New(impl.Config{Record: rec.Record})
	_ = rt.ScopeEnter()
	for _, call := range []func() (traces.Addr, error){
		func() (traces.Addr, error) { return rt.Alloc(impl.MaxSize + 1) },
		func() (traces.Addr, error) { return rt.StructInit(impl.MaxSize+1, nil) },
	} {
		a, err := call()
		if a != 0 || !errors.Is(err, impl.ErrOutOfMemory) {
			t.Errorf("got %v, %v; want 0 and ErrOutOfMemory", a, err)
		}
	}
	if n := len(rec.Events()); n != 1 {
		t.Errorf("%d events recorded, want only scope_enter", n)
	}
	if a, err := rt.Alloc(impl.MaxSize); err != nil || a == 0 {
		t.Errorf("Alloc(MaxSize) = %v, %v", a, err)
	}
}

// TestFIFOReuse checks the reuse order the runtime shows under each
// policy: LIFO hands back the block freed last, FIFO the one freed first,
// once the quarantine is full.
func TestFIFOReuse(t *testing.T) {
	alloc3 := func(rt *impl.Runtime) []traces.Addr {
		var as []traces.Addr
		for range 3 {
			a, _ := rt.Alloc(32)
			as = append(as, a)
		}
		for _, a := range as {
			_ = rt.Release(a)
		}
		return as
	}
	lifo := impl.New(impl.Config{})
	_ = lifo.ScopeEnter()
	freed := alloc3(lifo)
	if a, _ := lifo.Alloc(32); a != freed[2] {
		t.Errorf("LIFO reused %v, want the last freed %v", a, freed[2])
	}
	fifo := impl.New(impl.Config{Reuse: impl.ReuseFIFO, Quarantine: 2})
	_ = fifo.ScopeEnter()
	freed = alloc3(fifo)
	if a, _ := fifo.Alloc(32); a != freed[0] {
		t.Errorf("FIFO reused %v, want the first freed %v", a, freed[0])
	}
	if a, _ := fifo.Alloc(32); a == freed[1] || a == freed[2] {
		t.Errorf("FIFO reused %v from a quarantine of 2", a)
	}
}

// TestRecordToRoundTrip writes a run with RecordTo and reads it back with
// the trace reader: the runtime's events are valid trace events, and what
// is read is what a Recording of the same run holds.
func TestRecordToRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	tw := traces.NewWriter(&buf, impl.Header())
	var rec impl.Recording
	both := func(ev traces.Event) { impl.RecordTo(tw)(ev); rec.Record(ev) }
	execute(t, impl.Config{Record: both}, false, script{
		"enter", "t=alloc 16", "s=struct 32 t null", "param w s", "release t", "exit", "unparam w", "end"})
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := traces.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if h := rd.Header(); h != impl.Header() {
		t.Errorf("header read back %+v, want %+v", h, impl.Header())
	}
	var got []traces.Event
	for {
		var ev traces.Event
		if err := rd.Next(&ev); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if ev.Fields != nil {
			ev.Fields = append([]traces.Addr{}, ev.Fields...)
		}
		got = append(got, ev)
	}
	if len(got) != len(rec.Events()) {
		t.Fatalf("read %d events, recorded %d", len(got), len(rec.Events()))
	}
	for i, ev := range rec.Events() {
		if fmt.Sprint(got[i]) != fmt.Sprint(ev) {
			t.Errorf("event %d read back as %+v, recorded %+v", i, got[i], ev)
		}
	}
}

// TestStateIntoReuses: StateInto, refilling one State call after call as
// scopes open and close, gives what State gives afresh each time.
func TestStateIntoReuses(t *testing.T) {
	s := script{"enter", "a=alloc 64", "enter", "b=alloc 16", "register a", "param w b",
		"exit", "enter", "enter", "c=alloc 32", "exit", "exit", "unparam w", "exit"}
	var st traces.State
	r := &run{t: t, vars: map[string]traces.Addr{}, sizes: map[string]uint64{},
		latest: map[traces.Addr]string{}, first: map[traces.Addr]string{}}
	r.rt = impl.New(impl.Config{})
	for _, line := range s {
		if _, err := r.step(line); err != nil {
			t.Fatal(err)
		}
		r.rt.StateInto(&st)
		if want := r.rt.State(); !reflect.DeepEqual(st, want) {
			t.Fatalf("after %q: StateInto gave %s, State %s", line, r.renderState(st), r.renderState(want))
		}
	}
}
