package torchsnap_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/tlcheck/tlcheck/internal/snapgen"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

func TestSettings(t *testing.T) {
	r, err := torchsnap.NewReader(bytes.NewReader(mustRead(t, "testdata/real-cuda.pickle")))
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := r.Settings(); !ok || s != (torchsnap.Settings{}) {
		t.Errorf("real-cuda.pickle: settings %+v, %v; want PyTorch 2.11's defaults", s, ok)
	}
	for _, split := range []uint64{0, 128 << 20} {
		s, err := snapgen.Generate(snapgen.Config{Steps: 2, MaxSplitSize: split})
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
		got, ok := r.Settings()
		if !ok || got.MaxSplitSize != split || (split != 0) != (got.Conf != "") {
			t.Errorf("max_split_size %d: read %+v, %v", split, got, ok)
		}
	}
	r, err = torchsnap.NewReader(bytes.NewReader(mustRead(t, "testdata/twodev.pickle")))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Settings(); ok {
		t.Error("twodev.pickle has no allocator_settings, yet Settings says it has")
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAnnotations: PyTorch's own snapshot marks each SGD step and
// zero_grad, START and END, in time order.
func TestAnnotations(t *testing.T) {
	r, err := torchsnap.NewReader(bytes.NewReader(mustRead(t, "testdata/real-cuda.pickle")))
	if err != nil {
		t.Fatal(err)
	}
	a := r.Annotations()
	if len(a) != 12 || a[0] != (torchsnap.Annotation{Stage: "START", Name: "Optimizer.step#SGD.step", T: 1795667322590545000}) {
		t.Fatalf("annotations %+v", a)
	}
	for i := 1; i < len(a); i++ {
		if a[i].T < a[i-1].T {
			t.Errorf("annotation %d before %d", i, i-1)
		}
	}
}
