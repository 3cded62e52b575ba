package model_test

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// This file builds traces for tests from JSON Lines text with
// encoding/json, so that the model's tests do not depend on the trace
// reader, and states verdicts in the corpus's .want form.

// jsonEvent is an event as written in a trace.
type jsonEvent struct {
	Op      string        `json:"op"`
	Addr    traces.Addr   `json:"addr"`
	NewAddr traces.Addr   `json:"new_addr"`
	Size    *uint64       `json:"size"`
	Kind    string        `json:"kind"`
	Fields  []traces.Addr `json:"fields"`
	Name    string        `json:"name"`
	Slots   int           `json:"slots"`
	Slot    int           `json:"slot"`
	Var     string        `json:"var"`
	Space   string        `json:"space"`
	Site    string        `json:"site"`
	Count   *uint64       `json:"count"`
}

// sliceSource is a traces.Source over events in memory; event i stands on
// line i+2, after the header, as in a stream.
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

// parseTrace reads a header line and one event a line.
func parseTrace(t testing.TB, text string) *sliceSource {
	t.Helper()
	var src sliceSource
	lines := strings.Split(strings.TrimSpace(text), "\n")
	var h struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
		Effects bool   `json:"effects"`
		Source  string `json:"source"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil {
		t.Fatalf("header: %v", err)
	}
	src.h = traces.Header{Format: h.Format, Version: h.Version, Effects: h.Effects, Source: h.Source}
	for i, line := range lines[1:] {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var je jsonEvent
		if err := json.Unmarshal([]byte(line), &je); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		op, ok := traces.ParseOp(je.Op)
		if !ok {
			t.Fatalf("event %d: unknown op %q", i, je.Op)
		}
		ev := traces.Event{Op: op, Addr: je.Addr, NewAddr: je.NewAddr, Kind: je.Kind, Fields: je.Fields,
			Name: je.Name, Slots: je.Slots, Slot: je.Slot, Var: je.Var, Site: je.Site}
		if je.Size != nil {
			ev.Size, ev.HasSize = *je.Size, true
		}
		if je.Count != nil {
			ev.Count, ev.HasCount = *je.Count, true
		}
		if je.Space == "device" {
			ev.Space = traces.SpaceDevice
		}
		src.evs = append(src.evs, ev)
	}
	return &src
}

// verdict states a report as the corpus's .want files do: one line per
// violation ("KIND EVENT ADDR"), then "leaked OBJECTS BYTES" and
// "complete true|false".
func verdict(r traces.Report) []string {
	var lines []string
	for _, v := range r.Violations {
		lines = append(lines, fmt.Sprintf("%s %d %s", v.Kind, v.Event, v.Addr))
	}
	lines = append(lines,
		fmt.Sprintf("leaked %d %d", r.Leaked.Objects, r.Leaked.Bytes),
		fmt.Sprintf("complete %t", r.Complete))
	return lines
}

// replayText replays a trace given as text.
func replayText(t testing.TB, text string) (traces.Report, error) {
	t.Helper()
	return model.Replay(parseTrace(t, text))
}
