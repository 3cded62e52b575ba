package properties

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/proptest"
)

// traceText returns a run's trace as JSON Lines, for failure messages.
func traceText(r *Result) string {
	var b strings.Builder
	if err := writeTrace(&b, r.Header, r.Trace); err != nil {
		return "(trace not written: " + err.Error() + ")"
	}
	return b.String()
}

// setFlag sets a registered flag (rapid's) for the rest of the test,
// kept whole under -short (proptest.SetFlag).
func setFlag(t *testing.T, name, value string) {
	t.Helper()
	proptest.SetFlag(t, name, value)
}

// silentTB is a rapid.TB that only records (proptest.SilentTB), named.
type silentTB struct {
	name string
	proptest.SilentTB
}

func (tb *silentTB) Name() string { return tb.name }
