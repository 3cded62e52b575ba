package drive_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/drive"
)

// TestShrinkTowardsSmallestFailure: shrinking over the pipe does not stop
// where the failure's first kind can go no further: impl's runtime states
// its counts, so unregister-oldest-record first shows as a count-mismatch
// at a release, 9 steps shrunk, where its smallest form is the premature
// free it leads to. The finding is that smallest form, and says what the
// program first showed.
func TestShrinkTowardsSmallestFailure(t *testing.T) {
	r := newRunner(t, testDriver("impl:unregister-oldest-record", hangTimeout))
	start := time.Now()
	found, n, err := r.Search(drive.Options{Seed: 1, More: func(int) bool { return time.Since(start) < 10*time.Second }})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatalf("not caught in %d programs", n)
	}
	f := found[0]
	t.Logf("%v, %d steps:\n%s", f.Failure(), len(f.Program.Steps), f.Result.Listing())
	if steps := len(f.Program.Steps); steps > 8 {
		t.Errorf("shrunk to %d steps, want at most 8", steps)
	}
	if f.Failure().What != "count-mismatch" && !strings.Contains(f.Failure().Message, "the program before shrinking showed") {
		t.Errorf("the finding %v does not say what the program first showed", f.Failure())
	}
}
