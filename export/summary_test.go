package export

import (
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

func TestSummaryKinds(t *testing.T) {
	kinds := traces.Kinds()
	if len(kinds) < 2 {
		t.Fatalf("traces.Kinds() = %v", kinds)
	}
	s := Summary{ByKind: map[traces.Kind]int{kinds[1]: 2, kinds[0]: 1, "no-such-kind": 5}}
	if got, want := s.Kinds(), "1 "+string(kinds[0])+", 2 "+string(kinds[1]); got != want {
		t.Errorf("Kinds() = %q, want %q", got, want)
	}
	if got := (Summary{}).Kinds(); got != "" {
		t.Errorf("no violations: %q", got)
	}
}
