package properties

import (
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/traces"
)

// writeTrace writes h and events as a stream (JSON Lines).
func writeTrace(w io.Writer, h traces.Header, events []traces.Event) error {
	tw := traces.NewWriter(w, h)
	for i := range events {
		if err := tw.Write(&events[i]); err != nil {
			return fmt.Errorf("properties: trace event %d: %w", i, err)
		}
	}
	return tw.Close()
}
