package model_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// reusing is a Source that writes every event's fields into one array of
// its own, as the Source contract allows ("slices in ev may be reused by
// the following call"), and fails with err after its events.
type reusing struct {
	sliceSource
	buf []traces.Addr
	err error
}

func (s *reusing) Next(ev *traces.Event) error {
	if err := s.sliceSource.Next(ev); err != nil {
		if s.err != nil {
			return s.err
		}
		return err
	}
	s.buf = append(s.buf[:0], ev.Fields...)
	ev.Fields = s.buf
	return nil
}

// TestReplayReadsAhead holds Replay, which reads a batch of events before
// it checks them, to what checking each event as it is read would give:
// over several batches, with a Source that reuses its fields, and with
// errors of the model and of the Source in either order.
func TestReplayReadsAhead(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"format":"tlcheck-trace","version":1}` + "\n" + `{"op":"scope_enter"}` + "\n")
	for i := range 700 { // over two batches: every struct's fields are its own
		a, f := 0x1000+0x100*(i%50), 0x9000+0x100*(i%50)
		fmt.Fprintf(&b, `{"op":"alloc","addr":"%#x","size":8}`+"\n", f)
		fmt.Fprintf(&b, `{"op":"struct_init","addr":"%#x","size":8,"fields":["%#x"]}`+"\n", a, f)
		fmt.Fprintf(&b, `{"op":"unregister","addr":"%#x"}`+"\n", a)
	}
	b.WriteString(`{"op":"scope_exit"}` + "\n" + `{"op":"end"}`)
	trace := b.String()

	want := stepOneByOne(t, parseTrace(t, trace))
	got, err := model.Replay(&reusing{sliceSource: *parseTrace(t, trace)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Replay differs from stepping each event as read (-want +got):\n%s", diff)
	}

	// A model error (a free of a managed object, without effects) at event
	// 3 comes first, though the Source fails at event 5, in the same batch.
	readErr := errors.New("disk on fire")
	bad := parseTrace(t, `{"format":"tlcheck-trace","version":1}
{"op":"scope_enter"}
{"op":"alloc","addr":"0x10","size":8}
{"op":"malloc","addr":"0x20","size":8}
{"op":"free","addr":"0x10"}
{"op":"free","addr":"0x20"}`)
	_, err = model.Replay(&reusing{sliceSource: *bad, err: readErr})
	var te *traces.Error
	if !errors.As(err, &te) || te.Event != 3 {
		t.Errorf("model error then read error: got %v, want the model's error at event 3", err)
	}
	// A read error with no model error before it is returned as is.
	good := parseTrace(t, `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x20","size":8}`)
	if _, err := model.Replay(&reusing{sliceSource: *good, err: readErr}); err != readErr {
		t.Errorf("read error: got %v, want %v", err, readErr)
	}
}

// stepOneByOne replays src the plain way: read an event, check it.
func stepOneByOne(t *testing.T, src traces.Source) traces.Report {
	t.Helper()
	c := model.New(src.Header())
	var vs []traces.Violation
	var ev traces.Event
	for {
		err := src.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Step(&ev, src.Pos())
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, got...)
	}
	vs = append(vs, c.Close()...)
	r := c.Report()
	r.Violations = vs
	if r.Violations == nil {
		r.Violations = []traces.Violation{}
	}
	return r
}
