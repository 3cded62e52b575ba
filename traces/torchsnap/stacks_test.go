package torchsnap_test

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strconv"
	"testing"

	"github.com/tlcheck/tlcheck/internal/snapgen"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// TestStack: with Limits.Stacks, each event has the Python frames of the
// entry (or, live before the trace, the block) that made it, its site
// being the innermost one's; without, none.
func TestStack(t *testing.T) {
	s, err := snapgen.Generate(snapgen.Config{Loop: snapgen.KeepLoss, Steps: 3, RecordFrom: 1})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.WritePickle(&buf); err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{true, false} {
		r, err := torchsnap.NewReaderLimits(bytes.NewReader(buf.Bytes()), torchsnap.Limits{Stacks: keep})
		if err != nil {
			t.Fatal(err)
		}
		var ev traces.Event
		losses, prelude := 0, 0
		for n := 0; ; n++ {
			if err := r.Next(&ev); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			st := r.Stack(n)
			if !keep {
				if st != nil {
					t.Fatalf("event %d: a stack %v without Limits.Stacks", n, st)
				}
				continue
			}
			if ev.Op != traces.OpPoolGet {
				continue
			}
			if len(st) == 0 || ev.Site != st[0].File+":"+strconv.FormatInt(st[0].Line, 10) {
				t.Errorf("event %d at %s: stack %v", n, ev.Site, st)
			}
			if n < r.Stats().Prelude {
				prelude++
			}
			if ev.Site == snapgen.LossSite {
				losses++
				want := []torchsnap.Frame{{File: st[0].File, Line: 3494, Name: "cross_entropy"}, {File: "train.py", Line: 34, Name: "<module>"}}
				if !reflect.DeepEqual(st, want) {
					t.Errorf("the loss's stack %+v; want %+v", st, want)
				}
			}
		}
		if keep && (losses == 0 || prelude == 0) {
			t.Errorf("%d losses, %d blocks live before the trace seen", losses, prelude)
		}
	}
}
