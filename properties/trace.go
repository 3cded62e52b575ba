package properties

import (
	"bytes"
	"io"
	"sync"

	"github.com/tlcheck/tlcheck/properties/harness"
	"github.com/tlcheck/tlcheck/traces"
)

// writeTrace writes h and events as a stream (JSON Lines): the harness's
// one writer of a failure's trace (harness.WriteTrace).
func writeTrace(w io.Writer, h traces.Header, events []traces.Event) error {
	return harness.WriteTrace(w, h, events)
}

// encodeTrace appends h and events as a stream to dst (a session's
// buffer, kept from run to run): what writeTrace writes, byte for byte,
// without a traces.Writer's 64 KiB of buffering per run. The events are
// encoded by traces.AppendEvent, the Writer's own encoder; an event the
// Writer would refuse is written under a name no reader accepts, so
// reading it back fails as writing it would have.
func encodeTrace(dst []byte, h traces.Header, events []traces.Event) []byte {
	b := append(dst, headerLine(h)...)
	for i := range events {
		b = traces.AppendEvent(b, &events[i])
		b = append(b, '\n')
	}
	return b
}

// maxKeptTrace bounds the trace buffer a session keeps for the next run: a
// huge one is left to the collector.
const maxKeptTrace = 1 << 20

func keptTrace(b []byte) []byte {
	if cap(b) > maxKeptTrace {
		return nil
	}
	return b[:0]
}

// headerLine returns h's line as traces.NewWriter writes it, made once
// per header: a run's header differs only by the faults switched on.
func headerLine(h traces.Header) []byte {
	if line, ok := headerLines.Load(h); ok {
		return line.([]byte)
	}
	var b bytes.Buffer
	_ = writeTrace(&b, h, nil)
	line := b.Bytes()
	headerLines.Store(h, line)
	return line
}

var headerLines sync.Map // traces.Header -> []byte

// lender lends a Reader's events one at a time, each read into the same
// Event: the way the command's read-ahead hands events to model.Replay
// (traces.Lender), without the batch of events Replay reads ahead from a
// plain Source, which a run's short trace never fills.
type lender struct {
	*traces.Reader
	ev traces.Event
}

func (l *lender) Lend() (*traces.Event, traces.Pos, error) {
	err := l.Next(&l.ev)
	return &l.ev, l.Pos(), err
}
