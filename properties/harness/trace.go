package harness

import (
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/traces"
)

// WriteTrace writes h and events as a trace stream (JSON Lines), the file
// `tlcheck replay` reads: what a language's Failure.Trace writes.
func WriteTrace(w io.Writer, h traces.Header, events []traces.Event) error {
	tw := traces.NewWriter(w, h)
	for i := range events {
		if err := tw.Write(&events[i]); err != nil {
			return fmt.Errorf("harness: trace event %d: %w", i, err)
		}
	}
	return tw.Close()
}
