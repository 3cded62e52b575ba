package gpu_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/gpu"
	"github.com/tlcheck/tlcheck/traces"
)

// TestReservationMapsPages: a reservation costs no capacity; its pages
// count once mapped, each map and unmap is recorded with its address and
// size, and what the pages do not allow is an error.
func TestReservationMapsPages(t *testing.T) {
	var rec impl.Recording
	d := gpu.NewDevice(6*gpu.PageSize, rec.Record)
	r, err := d.Reserve(6*gpu.PageSize + 1) // rounded up to 7 pages
	if err != nil || r.Size != 7*gpu.PageSize || d.Used() != 0 {
		t.Fatalf("Reserve: %+v, %v, used %d", r, err, d.Used())
	}
	seg, err := d.DevMalloc(MiB) // placed after the reservation
	if err != nil || seg != r.Addr+traces.Addr(r.Size) {
		t.Fatalf("DevMalloc after a reservation: %s, %v", seg, err)
	}
	a, err := d.DevMap(r, 0, 2*gpu.PageSize)
	if err != nil || a != r.Addr || d.Used() != MiB+2*gpu.PageSize || r.Mapped() != 2*gpu.PageSize {
		t.Fatalf("DevMap: %s, %v, used %d", a, err, d.Used())
	}
	if _, err := d.DevMap(r, gpu.PageSize, 2*gpu.PageSize); err == nil {
		t.Error("mapping a mapped page again: no error")
	}
	if _, err := d.DevMap(r, 3, gpu.PageSize); err == nil {
		t.Error("mapping a part of a page: no error")
	}
	var oom *gpu.OutOfMemoryError
	if _, err := d.DevMap(r, 2*gpu.PageSize, 5*gpu.PageSize+0); !errors.As(err, &oom) {
		t.Errorf("mapping past the capacity: %v, want an *OutOfMemoryError", err)
	}
	if err := d.DevUnmap(r, gpu.PageSize, gpu.PageSize); err != nil {
		t.Fatal(err)
	}
	if err := d.DevUnmap(r, gpu.PageSize, gpu.PageSize); err == nil {
		t.Error("unmapping an unmapped page: no error")
	}
	if err := d.Release(r); err == nil {
		t.Error("releasing a reservation with a page mapped: no error")
	}
	if err := d.DevUnmap(r, 0, gpu.PageSize); err != nil {
		t.Fatal(err)
	}
	if err := d.Release(r); err != nil || d.Used() != MiB {
		t.Fatalf("Release: %v, used %d", err, d.Used())
	}
	var got []traces.Event
	for _, ev := range rec.Events() {
		if ev.Op == traces.OpDevMap || ev.Op == traces.OpDevUnmap {
			got = append(got, traces.Event{Op: ev.Op, Addr: ev.Addr, Size: ev.Size})
		}
	}
	p := uint64(gpu.PageSize)
	want := []traces.Event{
		{Op: traces.OpDevMap, Addr: r.Addr, Size: 2 * p},
		{Op: traces.OpDevMap, Addr: 0, Size: 5 * p}, // the failed map
		{Op: traces.OpDevUnmap, Addr: r.Addr + traces.Addr(p), Size: p},
		{Op: traces.OpDevUnmap, Addr: r.Addr + traces.Addr(p), Size: p}, // recorded, though refused
		{Op: traces.OpDevUnmap, Addr: r.Addr, Size: p},
	}
	if !slices.EqualFunc(got, want, func(a, b traces.Event) bool { return a.Op == b.Op && a.Addr == b.Addr && a.Size == b.Size }) {
		t.Errorf("recorded\n%+v\nwant\n%+v", got, want)
	}
}
