package gpu_test

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
)

func TestPreallocateFromEnv(t *testing.T) {
	for _, c := range []struct {
		val  string
		want uint64
		err  string
	}{
		{"", 0, ""},
		{"0", 0, ""},
		{"512", 512 << 20, ""},
		{"-1", 0, "TL_GPU_PREALLOCATE_MB"},
		{"1.5", 0, "TL_GPU_PREALLOCATE_MB"},
	} {
		got, err := gpu.PreallocateFromEnv(func(string) string { return c.val })
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %d, %v; want %d, %q", c.val, got, err, c.want, c.err)
		}
	}
}

// TestPersistentNeverReturns: keys are (elements, dtype, device), a
// release keeps the memory, the guard refuses a second release, and the
// trace replays clean.
func TestPersistentNeverReturns(t *testing.T) {
	var rec impl.Recording
	dev := gpu.NewDevice(64*MiB, rec.Record)
	p, _ := gpu.NewPersistent(dev, gpu.PersistentOptions{PreallocateBytes: MiB})
	f32 := gpu.Key{Elements: 1024, DType: gpu.F32}
	f16 := gpu.Key{Elements: 1024, DType: gpu.F16}
	a, _ := p.Acquire(f32)
	if err := p.Release(a); err != nil {
		t.Fatal(err)
	}
	if err := p.Release(a); err == nil || !strings.Contains(err.Error(), "already in the free list") {
		t.Errorf("second release: %v", err)
	}
	if b, _ := p.Acquire(f16); b == a {
		t.Error("an f16 tensor reused an f32 tensor's block")
	}
	if c, _ := p.Acquire(f32); c != a {
		t.Errorf("f32 acquire got %s, want the released %s", c, a)
	}
	big, _ := p.Acquire(gpu.Key{Elements: MiB, DType: gpu.F32}) // past the preallocation: a segment of its own
	_ = p.Release(big)
	st := p.Stats()
	if st.Hits != 1 || st.Misses != 3 || st.TotalAllocatedBytes != 5*MiB || dev.Used() != 5*MiB || st.FreeCount != 1 || st.FreeBytes != 4*MiB {
		t.Errorf("stats %+v, device %d", st, dev.Used())
	}
	if err := p.Release(0x1234); err == nil {
		t.Error("released a pointer the pool never handed out")
	}
	if _, err := gpu.NewPersistent(gpu.NewDevice(MiB, nil), gpu.PersistentOptions{PreallocateBytes: 2 * MiB}); err == nil {
		t.Error("preallocated past the capacity")
	}
	// The refused releases: the duplicate recorded nothing, the unknown
	// pointer a pool_put the model calls invalid.
	if evs := rec.Events(); evs[len(evs)-1].Addr != 0x1234 {
		t.Errorf("last event %+v, want the refused release of 0x1234", evs[len(evs)-1])
	}
}
