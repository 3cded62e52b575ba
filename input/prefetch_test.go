package input

import (
	"errors"
	"io"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/traces"
)

// script is a Source that yields n events, then err.
type script struct {
	n, i int
	err  error
	pos  traces.Pos
}

func (s *script) Header() traces.Header { return traces.Header{Source: "script"} }
func (s *script) Pos() traces.Pos       { return s.pos }
func (s *script) Next(ev *traces.Event) error {
	if s.i == s.n {
		return s.err
	}
	// Reuse ev.Fields, as the trace reader does.
	*ev = traces.Event{Op: traces.OpStructInit, Addr: traces.Addr(s.i), Fields: append(ev.Fields[:0], traces.Addr(s.i), 1)}
	s.pos = traces.Pos{Event: s.i, Line: s.i + 2}
	s.i++
	return nil
}

type step struct {
	Addr   traces.Addr
	Fields []traces.Addr
	Pos    traces.Pos
}

func drain(t *testing.T, src traces.Source) ([]step, error) {
	t.Helper()
	var steps []step
	var ev traces.Event
	for {
		if err := src.Next(&ev); err != nil {
			return steps, err
		}
		steps = append(steps, step{ev.Addr, append([]traces.Addr(nil), ev.Fields...), src.Pos()})
	}
}

// lent drains src through Lend.
func lent(t *testing.T, src traces.Lender) ([]step, error) {
	t.Helper()
	var steps []step
	for {
		ev, pos, err := src.Lend()
		if err != nil {
			return steps, err
		}
		if pos != src.Pos() {
			t.Fatalf("Lend gives position %+v, Pos %+v", pos, src.Pos())
		}
		steps = append(steps, step{ev.Addr, append([]traces.Addr(nil), ev.Fields...), pos})
	}
}

func TestPrefetchYieldsTheSource(t *testing.T) {
	bad := &traces.Error{Line: 9, Event: 7, Field: "addr", Err: errors.New("bad")}
	for _, tt := range []struct {
		n   int
		err error
	}{
		{0, io.EOF},
		{1, io.EOF},
		{batchSize, io.EOF},
		{3*batchSize*nBatches + 7, io.EOF}, // wraps the batch rotation
		{batchSize + 1, bad},
	} {
		want, wantErr := drain(t, &script{n: tt.n, err: tt.err})
		p, stop := prefetch(&script{n: tt.n, err: tt.err})
		got, err := drain(t, p)
		stop()
		if err != wantErr {
			t.Errorf("n=%d: error %v, want %v", tt.n, err, wantErr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("n=%d: events (-source +prefetch):\n%s", tt.n, diff)
		}
		lp, stopLent := prefetch(&script{n: tt.n, err: tt.err})
		got, err = lent(t, lp)
		stopLent()
		if err != wantErr {
			t.Errorf("n=%d: Lend's error %v, want %v", tt.n, err, wantErr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("n=%d: events (-source +lent):\n%s", tt.n, diff)
		}
		if err := p.Next(new(traces.Event)); err != wantErr {
			t.Errorf("n=%d: after the end, Next = %v, want %v again", tt.n, err, wantErr)
		}
		if p.Header().Source != "script" {
			t.Errorf("header not passed on: %+v", p.Header())
		}
	}
}

func TestPrefetchStopEarly(t *testing.T) {
	p, stop := prefetch(&script{n: 100 * batchSize, err: io.EOF})
	var ev traces.Event
	for range 10 {
		if err := p.Next(&ev); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	stop() // idempotent
}

// panicky is a Source whose reader has a bug.
type panicky struct{ script }

func (p *panicky) Next(ev *traces.Event) error {
	if p.i == 3 {
		panic("reader bug")
	}
	return p.script.Next(ev)
}

func TestPrefetchCarriesPanics(t *testing.T) {
	p, stop := prefetch(&panicky{script{n: 10, err: io.EOF}})
	defer stop()
	var ev traces.Event
	for i := range 3 {
		if err := p.Next(&ev); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	defer func() {
		v := recover()
		if s, ok := v.(string); !ok || !strings.Contains(s, "reader bug") {
			t.Errorf("recovered %v, want the reader's panic", v)
		}
	}()
	p.Next(&ev)
	t.Error("Next returned after the reader panicked")
}

// TestSlotLayout: a read-ahead slot fills whole cache lines, and its
// position and the fields of a malloc or free (up to Site) lie in its
// first line, which is all the model reads of most events.
func TestSlotLayout(t *testing.T) {
	var s slot
	if size := unsafe.Sizeof(s); size%cacheLine != 0 {
		t.Errorf("a slot is %d bytes, not whole %d-byte cache lines", size, cacheLine)
	}
	hot := unsafe.Offsetof(s.ev) + unsafe.Offsetof(s.ev.Site) + unsafe.Sizeof(s.ev.Site)
	if hot > cacheLine {
		t.Errorf("the position and an event's fields up to Site take %d bytes, more than a cache line", hot)
	}
	b := make([]slot, batchSize)
	if a := uintptr(unsafe.Pointer(&b[0])); a%cacheLine != 0 {
		t.Errorf("a batch starts at %#x, inside a cache line", a)
	}
}
