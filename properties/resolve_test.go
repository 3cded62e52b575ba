package properties

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/traces"
)

// Resolve records what Run records: the same calls as made and the same
// trace, only without judging them.
func TestResolveIsRunsRecord(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 300 {
		p := Generate(r)
		want, _ := Run(p, impl.Config{})
		got := Resolve(p)
		if len(got.Calls) != len(want.Calls) || len(got.Trace) != len(want.Trace) {
			t.Fatalf("Resolve: %d calls, %d events; Run: %d calls, %d events\n%v", len(got.Calls), len(got.Trace), len(want.Calls), len(want.Trace), p)
		}
		for i := range want.Calls {
			g, w := got.Calls[i], want.Calls[i]
			if g.Step.String() != w.Step.String() || g.Event != w.Event {
				t.Fatalf("call %d: Resolve made %v (event %d), Run %v (event %d)\n%v", i, g.Step, g.Event, w.Step, w.Event, p)
			}
		}
		if !slices.EqualFunc(got.Trace, want.Trace, func(a, b traces.Event) bool {
			return string(traces.AppendEvent(nil, &a)) == string(traces.AppendEvent(nil, &b))
		}) {
			t.Fatalf("the traces differ\n%v", p)
		}
	}
}
