package impl

import (
	"io"

	"github.com/tlcheck/tlcheck/traces"
)

// Header returns the header of the traces a Runtime records: effects on,
// since the runtime records every free it does.
func Header() traces.Header {
	return traces.Header{
		Format:  traces.FormatName,
		Version: traces.Version,
		Effects: true,
		Source:  "tlcheck impl (Go)",
	}
}

// RecordTo returns a Config.Record that writes every event to w, which
// should have been made with Header(). The Writer's errors are sticky:
// check them once, at w.Close.
func RecordTo(w *traces.Writer) func(traces.Event) {
	return func(ev traces.Event) { _ = w.Write(&ev) }
}

// Recording keeps the events a Runtime records, in order. Wire it with
// Config{Record: rec.Record}; replay it with rec.Source().
type Recording struct {
	events []traces.Event
}

// Record appends ev. It is the function to put in Config.Record.
func (r *Recording) Record(ev traces.Event) {
	r.events = append(r.events, ev)
}

// Events returns the events recorded so far. The slice is the
// Recording's own: callers must not modify it.
func (r *Recording) Events() []traces.Event {
	return r.events
}

// Reset forgets every event, keeping the memory for the next run.
func (r *Recording) Reset() {
	clear(r.events)
	r.events = r.events[:0]
}

// Source returns a traces.Source that reads the events recorded so far,
// under Header(), so a run can be replayed without writing a file. Pos
// gives each event's number; Line is 0, as the events have no file.
func (r *Recording) Source() traces.Source {
	return &recordingSource{events: r.events, next: 0}
}

type recordingSource struct {
	events []traces.Event
	next   int
}

func (s *recordingSource) Header() traces.Header { return Header() }

func (s *recordingSource) Next(ev *traces.Event) error {
	if s.next >= len(s.events) {
		return io.EOF
	}
	*ev = s.events[s.next]
	s.next++
	return nil
}

func (s *recordingSource) Pos() traces.Pos {
	return traces.Pos{Event: s.next - 1}
}
