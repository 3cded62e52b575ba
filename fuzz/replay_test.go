package fuzz

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/mtrace"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// FuzzReplay feeds arbitrary bytes to the trace reader and, separately,
// to the mtrace reader, and replays what they read through the model.
// Whatever the bytes, nothing panics and the verdict is consistent.
func FuzzReplay(f *testing.F) {
	f.Add([]byte(`{"format":"tlcheck-trace","version":1}` + "\n" + `{"op":"end"}`))
	f.Add([]byte("+ 0x10 0x8\n- 0x10\n"))
	f.Add([]byte("\x80\x04}(\x8c\x08segments]\x8c\rdevice_traces](](}(\x8c\x06action\x8c\rsegment_alloc\x8c\x04addr\x8a\x06\x00\x00\x00\x00\xf0\x7f\x8c\x04size\x4a\x00\x00\x20\x00ueeu."))
	f.Fuzz(func(t *testing.T, data []byte) {
		if r, err := traces.NewReader(bytes.NewReader(data)); err != nil {
			mustBeInputError(t, "trace header", err)
		} else {
			checkReplay(t, r, false)
		}
		checkReplay(t, mtrace.NewReader(bytes.NewReader(data)), true)
		checkMtraceLeaks(t, data)
		// As a PyTorch memory snapshot (its own errors are checked by
		// traces/torchsnap's FuzzSnapshot): taken mid-run, never complete.
		if r, err := torchsnap.NewReaderLimits(bytes.NewReader(data), torchsnap.Limits{MaxBytes: 64 << 10}); err == nil {
			if rep := checkReplay(t, r, false); rep.Complete {
				t.Fatalf("a snapshot replayed as complete")
			}
		}
	})
}

// counting is a Source that counts the events it passes on and remembers
// whether one of them was end.
type counting struct {
	traces.Source
	n     int
	ended bool
}

func (c *counting) Next(ev *traces.Event) error {
	err := c.Source.Next(ev)
	if err == nil {
		c.n++
		c.ended = c.ended || ev.Op == traces.OpEnd
	}
	return err
}

// checkReplay replays src and checks the report against what was read,
// which it returns (the zero Report where src could not be read).
func checkReplay(t *testing.T, src traces.Source, isLog bool) traces.Report {
	t.Helper()
	c := &counting{Source: src}
	rep, err := model.Replay(c)
	if err != nil {
		mustBeInputError(t, "replay", err)
		return traces.Report{}
	}
	if rep.Events != c.n {
		t.Fatalf("report counts %d events, the reader yielded %d", rep.Events, c.n)
	}
	if rep.Complete && !c.ended {
		t.Fatalf("report complete, but no end event was read")
	}
	if isLog && !rep.Complete {
		t.Fatalf("an mtrace log read to its end must be complete")
	}
	if !rep.Complete && (rep.Leaked != traces.Totals{} || rep.StillReachable != traces.Totals{}) {
		t.Fatalf("incomplete trace with leak totals %+v / %+v: no leak check may run", rep.Leaked, rep.StillReachable)
	}
	leaks := 0
	for i, v := range rep.Violations {
		if !slices.Contains(traces.Kinds(), v.Kind) {
			t.Fatalf("violation %d has kind %q, not one of the contract's", i, v.Kind)
		}
		if v.Event < 0 || v.Event >= rep.Events {
			t.Fatalf("violation %d at event %d, outside 0..%d", i, v.Event, rep.Events-1)
		}
		if i > 0 && v.Event < rep.Violations[i-1].Event {
			t.Fatalf("violations out of event order: %d after %d", v.Event, rep.Violations[i-1].Event)
		}
		if v.Message == "" {
			t.Fatalf("violation %d (%s) has no message", i, v.Kind)
		}
		for _, r := range v.Related {
			if r.Event < 0 || r.Event >= rep.Events || r.What == "" {
				t.Fatalf("violation %d: related %+v outside the trace or unnamed", i, r)
			}
		}
		if isLog && (v.Kind == traces.Misuse || v.Kind == traces.StaleReuse || v.Kind == traces.PrematureFree) {
			t.Fatalf("an mtrace log holds only mallocs and frees, yet got %s: %s", v.Kind, v.Message)
		}
		if v.Kind == traces.Leak {
			leaks++
		}
	}
	if isLog && leaks != rep.Leaked.Objects {
		t.Fatalf("%d leak violations, leaked totals say %d objects", leaks, rep.Leaked.Objects)
	}
	return rep
}

// mustBeInputError checks that err is an input error naming its place.
func mustBeInputError(t *testing.T, what string, err error) {
	t.Helper()
	var te *traces.Error
	if !errors.As(err, &te) {
		t.Fatalf("%s: error %T (%v) is not a *traces.Error", what, err, err)
	}
	if te.Error() == "" || te.Line < 0 || te.Event < -1 {
		t.Fatalf("%s: input error without a place: %#v", what, te)
	}
}

// checkMtraceLeaks holds the model's leak list for data, read as an mtrace
// log, against glibc's script (mtraceLeaks restates it): the same
// addresses, as often. Only addresses are compared; see mtraceLeaks.
func checkMtraceLeaks(t *testing.T, data []byte) {
	t.Helper()
	want, ok := mtraceLeaks(data)
	if !ok {
		return
	}
	rep, err := model.Replay(mtrace.NewReader(bytes.NewReader(data)))
	if err != nil {
		t.Fatalf("the reader accepted every line, yet replay failed: %v", err)
	}
	var got []traces.Addr
	for _, v := range rep.Violations {
		if v.Kind == traces.Leak {
			got = append(got, v.Addr)
		}
	}
	slices.Sort(got)
	if !slices.Equal(want, got) {
		t.Fatalf("leaked addresses %v, glibc's mtrace script leaks %v", got, want)
	}
}

// mtraceLeaks is glibc's mtrace script in a few lines: a map of live
// blocks from address to size, where "+" and ">" add a block unless its
// address is live already, and "-" and "<" remove it. It returns the
// sorted addresses left, or false if the mtrace reader rejects data.
func mtraceLeaks(data []byte) ([]traces.Addr, bool) {
	r := mtrace.NewReader(bytes.NewReader(data))
	live := make(map[traces.Addr]bool)
	var ev traces.Event
	for {
		switch err := r.Next(&ev); {
		case err == io.EOF:
			var addrs []traces.Addr
			for a := range live {
				addrs = append(addrs, a)
			}
			slices.Sort(addrs)
			return addrs, true
		case err != nil:
			return nil, false
		}
		switch ev.Op {
		case traces.OpMalloc:
			live[ev.Addr] = true // a duplicate keeps the first block, as the script does
		case traces.OpFree:
			delete(live, ev.Addr)
		}
	}
}
