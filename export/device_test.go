package export_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/export"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// Allocated and reserved are named: the summary holds both, and the
// page's device line says it shows reserved bytes and gives the allocated.
func TestDeviceAllocatedAndReserved(t *testing.T) {
	trace := `{"format":"tlcheck-trace","version":1}
{"op":"dev_malloc","addr":"0x100000","size":1048576}
{"op":"dev_map","addr":"0x800000","size":2097152}
{"op":"pool_get","addr":"0x100000","size":4096}
{"op":"pool_get","addr":"0x800000","size":8192}
{"op":"pool_put","addr":"0x100000"}
`
	var out bytes.Buffer
	src, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := export.Write(&out, export.HTML, src, export.Options{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	want := model.DeviceBytes{PeakAllocated: 12288, Allocated: 8192, PeakReserved: 3 << 20, Reserved: 3 << 20}
	if sum.Device != want {
		t.Errorf("summary %+v, want %+v", sum.Device, want)
	}
	for _, s := range []string{"device, reserved (segments and mapped ranges): peak 3.0 MiB", "allocated (pool blocks): peak 12.0 KiB"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("the page lacks %q", s)
		}
	}
}

// The Perfetto export names its device counters: reserved, and allocated
// beside it.
func TestPerfettoNamesAllocatedAndReserved(t *testing.T) {
	trace := `{"format":"tlcheck-trace","version":1}
{"op":"dev_map","addr":"0x800000","size":2097152}
{"op":"pool_get","addr":"0x800000","size":8192}
{"op":"pool_get","addr":"0x802000","size":4096}
{"op":"pool_put","addr":"0x800000"}
`
	var out bytes.Buffer
	src, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := export.Write(&out, export.Perfetto, src, export.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`"name":"device reserved bytes","pid":1,"ts":0,"args":{"bytes":2097152}`,
		`"name":"device allocated bytes","pid":1,"ts":2,"args":{"bytes":12288}`,
		`"name":"device allocated bytes","pid":1,"ts":3,"args":{"bytes":4096}`,
	} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("the export lacks %s:\n%s", s, out.String())
		}
	}
}
