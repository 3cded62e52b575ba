package torchsnap_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/tlcheck/tlcheck/internal/snapgen"
	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// TestOOMs: a snapshot that ends in an out-of-memory error tells its
// request, the device's free bytes and where it stands among the events.
func TestOOMs(t *testing.T) {
	s, err := snapgen.Generate(snapgen.Config{Loop: snapgen.KeepGraph, Steps: 100, Capacity: 200 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.WritePickle(&buf); err != nil {
		t.Fatal(err)
	}
	r, err := torchsnap.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var ev traces.Event
	for {
		if err := r.Next(&ev); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
	}
	last := s.Entries[len(s.Entries)-1]
	want := []torchsnap.OOM{{Event: n, Size: last.Size, DeviceFree: last.Addr, Site: snapgen.InputSite, T: last.TimeUS * 1000}}
	got := r.OOMs()
	if len(got) != 1 || got[0].Size != want[0].Size || got[0].DeviceFree != want[0].DeviceFree || got[0].Event != n || got[0].T != want[0].T {
		t.Errorf("OOMs %+v; want %+v", got, want)
	}
}
