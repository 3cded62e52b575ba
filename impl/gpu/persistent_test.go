package gpu_test

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
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

// TestPersistentReuseOrder pins "last released, first reused": each key's
// free list is a stack, so the tensors of a key come back in the reverse
// of the order they were released, and another key's releases between
// them change nothing.
func TestPersistentReuseOrder(t *testing.T) {
	k := gpu.Key{Elements: 1024, DType: gpu.F32}
	other := gpu.Key{Elements: 1024, DType: gpu.F16}
	tests := []struct {
		name    string
		release []int // indexes of the three k tensors, in release order
		want    []int // the order the next three acquires of k return them
	}{
		{"in order", []int{0, 1, 2}, []int{2, 1, 0}},
		{"reversed", []int{2, 1, 0}, []int{0, 1, 2}},
		{"middle last", []int{0, 2, 1}, []int{1, 2, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := gpu.NewPersistent(gpu.NewDevice(64*MiB, nil), gpu.PersistentOptions{})
			var ts [3]traces.Addr
			for i := range ts {
				ts[i], _ = p.Acquire(k)
			}
			o, _ := p.Acquire(other)
			for j, i := range tt.release {
				if err := p.Release(ts[i]); err != nil {
					t.Fatal(err)
				}
				if j == 1 {
					_ = p.Release(o) // another key's release in between
				}
			}
			for _, i := range tt.want {
				if got, _ := p.Acquire(k); got != ts[i] {
					t.Fatalf("acquire got %s, want tensor %d (%s), the last released of those still free; tensors %v", got, i, ts[i], ts)
				}
			}
		})
	}
}

// TestPersistentPreallocationFit: a new tensor is carved from the
// preallocated region when its rounded size fits in what is left, an exact
// fit included; only one that does not fit gets a segment of its own.
func TestPersistentPreallocationFit(t *testing.T) {
	const pre = MiB
	tests := []struct {
		name   string
		first  uint64 // bytes carved before the tensor under test
		bytes  uint64 // the tensor under test (U8 elements)
		carved bool
	}{
		{"room to spare", 0, 4096, true},
		{"exactly what is left", pre - 4096, 4096, true},
		{"exactly the whole region", 0, pre, true},
		{"rounds up to exactly what is left", pre - 4096, 4000, true},
		{"one byte too many", pre - 4096, 4097, false},
		{"rounds past what is left", pre - 512, 513, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev := gpu.NewDevice(64*MiB, nil)
			p, err := gpu.NewPersistent(dev, gpu.PersistentOptions{PreallocateBytes: pre})
			if err != nil {
				t.Fatal(err)
			}
			if tt.first > 0 {
				if a, _ := p.Acquire(gpu.Key{Elements: tt.first, DType: gpu.U8}); a != gpu.Base {
					t.Fatalf("the first tensor is at %s, want the region's start %s", a, gpu.Base)
				}
			}
			a, err := p.Acquire(gpu.Key{Elements: tt.bytes, DType: gpu.U8})
			if err != nil {
				t.Fatal(err)
			}
			wantAddr, wantUsed := gpu.Base+traces.Addr(tt.first), uint64(pre)
			if !tt.carved {
				wantAddr, wantUsed = gpu.Base+pre, pre+(tt.bytes+511)/512*512
			}
			st := p.Stats()
			if a != wantAddr || dev.Used() != wantUsed || dev.Segments() != 1+btoi(!tt.carved) || st.TotalAllocatedBytes != wantUsed {
				t.Errorf("tensor at %s, device %d bytes in %d segments, total_allocated %d; want %s, %d bytes in %d, %d",
					a, dev.Used(), dev.Segments(), st.TotalAllocatedBytes, wantAddr, wantUsed, 1+btoi(!tt.carved), wantUsed)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestPersistentKeyHasDevice: the device id is part of the key, so a
// tensor released on one device is never handed to another.
func TestPersistentKeyHasDevice(t *testing.T) {
	p, _ := gpu.NewPersistent(gpu.NewDevice(64*MiB, nil), gpu.PersistentOptions{})
	a, _ := p.Acquire(gpu.Key{Elements: 1024, DType: gpu.F32, Device: 0})
	_ = p.Release(a)
	if b, _ := p.Acquire(gpu.Key{Elements: 1024, DType: gpu.F32, Device: 1}); b == a {
		t.Errorf("device 1 got device 0's released tensor %s", a)
	}
	if c, _ := p.Acquire(gpu.Key{Elements: 1024, DType: gpu.F32, Device: 0}); c != a {
		t.Errorf("device 0 got %s, want its released %s", c, a)
	}
}
