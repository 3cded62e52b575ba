package gpu_test

import (
	"errors"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
)

// TestDeviceAddresses: first fit from Base, freed ranges merged and handed
// out again, the same addresses on every run.
func TestDeviceAddresses(t *testing.T) {
	var rec impl.Recording
	d := gpu.NewDevice(10*MiB, rec.Record)
	b := gpu.Base
	steps := []struct {
		op   string
		size uint64
		addr traces.Addr // malloc: the address wanted; free: the segment
		used uint64
	}{
		{"malloc", MiB, b, MiB},
		{"malloc", 2 * MiB, b + MiB, 3 * MiB},
		{"malloc", MiB, b + 3*MiB, 4 * MiB},
		{"malloc", 1, b + 4*MiB, 4*MiB + 512}, // rounded up to 512
		{"free", 0, b + MiB, 2*MiB + 512},
		{"malloc", MiB, b + MiB, 3*MiB + 512}, // first fit: the hole
		{"free", 0, b, 2*MiB + 512},
		{"free", 0, b + MiB, MiB + 512},     // merges with the holes on both sides: [b, b+3 MiB)
		{"malloc", 3 * MiB, b, 4*MiB + 512}, // fits the merged hole exactly
		{"free", 0, b + 3*MiB, 3*MiB + 512},
		{"malloc", MiB, b + 3*MiB, 4*MiB + 512},
		{"free", 0, b + 4*MiB, 4 * MiB}, // the top segment: the top comes down
		{"malloc", 2 * MiB, b + 4*MiB, 6 * MiB},
	}
	for i, s := range steps {
		if s.op == "malloc" {
			a, err := d.DevMalloc(s.size)
			if err != nil || a != s.addr {
				t.Fatalf("step %d: DevMalloc(%d) = %s, %v; want %s", i, s.size, a, err, s.addr)
			}
		} else if err := d.DevFree(s.addr); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if d.Used() != s.used {
			t.Fatalf("step %d: used %d, want %d", i, d.Used(), s.used)
		}
	}
	_, err := d.DevMalloc(5 * MiB)
	var oom *gpu.OutOfMemoryError
	if !errors.As(err, &oom) || oom.Free != 10*MiB-d.Used() {
		t.Fatalf("past the capacity: %v", err)
	}
	if evs := rec.Events(); evs[len(evs)-1].Op != traces.OpDevMalloc || evs[len(evs)-1].Addr != 0 {
		t.Errorf("a failed cudaMalloc is recorded as dev_malloc at NULL, got %+v", evs[len(evs)-1])
	}
	d.End()
	// The model does not count segments still reserved at end as leaks
	// (FORMAT.md lists pool blocks not put back, not segments), so the
	// pool property checks that empty_cache returns everything itself.
	replayClean(t, &rec)
}
