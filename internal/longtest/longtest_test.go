package longtest

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what Skip says instead of stopping.
type recorder struct {
	testing.TB
	skipped string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
}

func TestSwitch(t *testing.T) {
	for _, tc := range []struct {
		value   string
		enabled bool
	}{
		{"", false},
		{"0", false},
		{"yes", false}, // only 1: a typo does not start half an hour of tests
		{"1", true},
	} {
		t.Run("TLCHECK_LONG="+tc.value, func(t *testing.T) {
			t.Setenv(Env, tc.value)
			if got := Enabled(); got != tc.enabled {
				t.Fatalf("Enabled() = %v, want %v", got, tc.enabled)
			}
			if got, want := Choose(3, 30), map[bool]int{false: 3, true: 30}[tc.enabled]; got != want {
				t.Errorf("Choose(3, 30) = %d, want %d", got, want)
			}
			r := &recorder{TB: t}
			Skip(r, "many programs")
			if skipped := r.skipped != ""; skipped == tc.enabled {
				t.Fatalf("skipped %v (%q), want %v", skipped, r.skipped, !tc.enabled)
			}
			// The skip says what is left out and how to run it.
			for _, want := range []string{"many programs", "TLCHECK_LONG=1 go test ./..."} {
				if !tc.enabled && !strings.Contains(r.skipped, want) {
					t.Errorf("the skip %q does not say %q", r.skipped, want)
				}
			}
		})
	}
}
