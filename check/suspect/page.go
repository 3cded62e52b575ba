package suspect

import (
	"fmt"

	"github.com/tlcheck/tlcheck/export"
)

// Page returns r's suspects as the HTML page shows them (export.Options.Page):
// the confidence in words, the evidence as the events that made the kept
// blocks (which the page marks on its timeline), the stack as
// "function file:line", innermost first. A nil Result, or one without
// suspects, gives nil.
func (r *Result) Page() []export.PageSuspect {
	if r == nil {
		return nil
	}
	var out []export.PageSuspect
	for _, s := range r.Suspects {
		p := export.PageSuspect{
			Site:               s.Site,
			BytesPerIteration:  s.BytesPerIteration,
			BlocksPerIteration: float64(s.BlocksPerIteration),
			Iterations:         s.IterationsSeen,
			Confidence: fmt.Sprintf("%s: %d of %d complete iterations, %.0f%% of them alike",
				s.Confidence, s.IterationsSeen, s.Complete, 100*s.Steadiness),
		}
		for _, f := range s.Stack {
			p.Stack = append(p.Stack, fmt.Sprintf("%s %s:%d", f.Name, f.File, f.Line))
		}
		for _, b := range s.Evidence {
			p.Events = append(p.Events, b.Event)
		}
		out = append(out, p)
	}
	return out
}
