package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/tlcheck/tlcheck/export"
	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/properties"
	"github.com/tlcheck/tlcheck/properties/flat"
	"github.com/tlcheck/tlcheck/traces"
)

// The exports are views of the model (package export builds them on
// model.Watch). These tests hold each view's totals to the model's
// verdict on many traces, clean and broken: the things the timeline draws
// and the profile counts are the things the model made, its peak and
// leaks are the model's, and every violation is shown once. A view that
// drifted from the model (a leak counted after end, a late free not taken
// back, a life never ended) fails here.

// agreeWithModel exports the trace as a profile and as a timeline and
// compares their totals with the model's report.
func agreeWithModel(h traces.Header, events []traces.Event) error {
	rep, err := model.Replay(&sliceSource{h: h, evs: events})
	if err != nil {
		return nil // input the model refuses: the export refuses it too
	}
	var buf bytes.Buffer
	if _, err := export.Write(&buf, export.Pprof, &sliceSource{h: h, evs: events}, export.Options{Name: "t"}); err != nil {
		return fmt.Errorf("pprof export: %v", err)
	}
	prof, err := profile.Parse(&buf)
	if err != nil {
		return fmt.Errorf("reading the profile: %v", err)
	}
	var sums [6]int64 // leaked_bytes, leaked_objects, peak_live_bytes, peak_live_objects, alloc_bytes, alloc_objects
	for _, s := range prof.Sample {
		for i, v := range s.Value {
			sums[i] += v
		}
	}
	if int(sums[5]) != rep.Objects {
		return fmt.Errorf("the profile allocates %d things, the model made %d", sums[5], rep.Objects)
	}
	if uint64(sums[2]) != rep.PeakLiveBytes {
		return fmt.Errorf("the profile's peak shares add up to %d bytes, the model's peak is %d", sums[2], rep.PeakLiveBytes)
	}
	// Where events follow end, leaks found after it are not counted by
	// either; the model's totals are the end's.
	if leaked := (traces.Totals{Objects: int(sums[1]), Bytes: uint64(sums[0])}); rep.Complete && leaked != rep.Leaked {
		return fmt.Errorf("the profile leaks %+v, the model %+v", leaked, rep.Leaked)
	}

	buf.Reset()
	if _, err := export.Write(&buf, export.Perfetto, &sliceSource{h: h, evs: events}, export.Options{Name: "t"}); err != nil {
		return fmt.Errorf("perfetto export: %v", err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph string `json:"ph"`
			ID int    `json:"id"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		return fmt.Errorf("reading the timeline: %v", err)
	}
	begun, ended := map[int]int{}, map[int]int{}
	instants := 0
	for _, e := range doc.TraceEvents {
		switch e.Ph {
		case "b":
			begun[e.ID]++
		case "e":
			ended[e.ID]++
		case "i":
			instants++
		}
	}
	if len(begun) != rep.Objects {
		return fmt.Errorf("the timeline draws %d lives, the model made %d things", len(begun), rep.Objects)
	}
	for id, n := range begun {
		if n != 1 || ended[id] != 1 {
			return fmt.Errorf("life #%d begins %d times and ends %d times in the timeline", id, n, ended[id])
		}
	}
	if instants != len(rep.Violations) {
		return fmt.Errorf("the timeline shows %d violations, the model reports %d", instants, len(rep.Violations))
	}
	return nil
}

// sliceSource is a trace held in memory.
type sliceSource struct {
	h   traces.Header
	evs []traces.Event
	i   int
}

func (s *sliceSource) Header() traces.Header { return s.h }
func (s *sliceSource) Pos() traces.Pos       { return traces.Pos{Event: s.i - 1, Line: s.i + 1} }
func (s *sliceSource) Next(ev *traces.Event) error {
	if s.i == len(s.evs) {
		return io.EOF
	}
	*ev = s.evs[s.i]
	s.i++
	return nil
}

// readEvents reads a whole trace file into memory, for the tests.
func readEvents(t *testing.T, path string) (traces.Header, []traces.Event) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := traces.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var evs []traces.Event
	for {
		var ev traces.Event
		if err := r.Next(&ev); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		ev.Fields = append([]traces.Addr(nil), ev.Fields...)
		evs = append(evs, ev)
	}
	return r.Header(), evs
}

func TestExportsAgreeWithModelOnShippedTraces(t *testing.T) {
	var paths []string
	for _, pat := range []string{"../../traces/testdata/corpus/*.jsonl", "../../traces/testdata/format/*.json*"} {
		m, _ := filepath.Glob(pat)
		paths = append(paths, m...)
	}
	if len(paths) < 30 {
		t.Fatalf("found %d shipped traces; the corpus moved?", len(paths))
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			h, evs := readEvents(t, p)
			if err := agreeWithModel(h, evs); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestExportsAgreeWithModelOnRandomTraces steps random events of every
// op, mostly wrong ones, over a few addresses, as the model's own random
// test does: the views must follow the model through misuse too.
func TestExportsAgreeWithModelOnRandomTraces(t *testing.T) {
	ops := traces.Ops()
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 7))
		addr := func() traces.Addr {
			if rng.IntN(10) == 0 {
				return 0
			}
			return traces.Addr(0x1000 + 0x40*rng.IntN(8) + rng.IntN(2)*8)
		}
		names := []string{"a", "b"}
		var evs []traces.Event
		for i := range 20 + rng.IntN(200) {
			ev := traces.Event{Op: ops[rng.IntN(len(ops))], Addr: addr(), NewAddr: addr(),
				Size: uint64(rng.IntN(200)), Name: names[rng.IntN(2)],
				Slots: rng.IntN(4), Slot: rng.IntN(5) - 1, Var: names[rng.IntN(2)], Site: fmt.Sprint("r.tl:", i),
				T: int64(i / 3 * 1000)}
			if ev.Op == traces.OpStructInit {
				ev.Fields = []traces.Addr{addr(), addr()}
			}
			if ev.Op == traces.OpEnd && (seed%4 < 2 || rng.IntN(3) > 0) {
				continue // half the traces end only at the last event
			}
			evs = append(evs, ev)
		}
		evs = append(evs, traces.Event{Op: traces.OpEnd})
		if err := agreeWithModel(traces.Header{Effects: seed%2 == 0}, evs); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// TestExportsAgreeWithModelOnRuntimeTraces checks the traces the Go
// runtime in impl/ writes for generated programs, with each catalogued
// fault on: real protocols, with real bugs.
func TestExportsAgreeWithModelOnRuntimeTraces(t *testing.T) {
	configs := []impl.Config{{}}
	for _, f := range impl.Catalog() {
		if f.Engine != impl.EngineProgram {
			continue // not Runtime's
		}
		configs = append(configs, impl.Config{Faults: []impl.Fault{f.Name}})
	}
	for _, cfg := range configs {
		name := "none"
		if len(cfg.Faults) > 0 {
			name = string(cfg.Faults[0])
		}
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range 40 {
				r, _ := properties.Run(flat.Generate(rng), cfg)
				if err := agreeWithModel(r.Header, r.Trace); err != nil {
					t.Fatalf("program %d: %v", i, err)
				}
			}
		})
	}
}
