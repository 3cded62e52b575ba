package torchsnap_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// bigSnapshot writes a snapshot of n entries shaped as
// testdata/make_big_snapshot.py writes them (12 frames an entry, each a
// dict of its own, filenames shared through the memo, names written each
// time), about 450 bytes an entry, without Python.
func bigSnapshot(n int) []byte {
	var b strings.Builder
	const files = 40
	b.WriteString("\x80\x04")
	for f := range files { // memo entry f, popped
		b.WriteString(pstr(fmt.Sprintf("/opt/venv/lib/python3.12/site-packages/torch/nn/modules/mod%d.py", f)) + "\x940")
	}
	b.WriteString("}(" + pstr("segments") + "]" + pstr("device_traces") + "](](")
	for i := range n {
		if i > 0 && i%1000 == 0 {
			b.WriteString("e(")
		}
		var fr strings.Builder
		for k := range 12 {
			f := (i*7 + k) % files
			file := fmt.Sprintf("j%c\x00\x00\x00", byte(f)) // LONG_BINGET f
			line := 10 + (i*13+k*17)%4000
			fr.WriteString(pdict(pstr("filename"), file, pstr("line"), "M"+string([]byte{byte(line), byte(line >> 8)}),
				pstr("name"), pstr(fmt.Sprintf("torch.nn.Module.forward_%d_%d", (i+k)%200, k))))
		}
		addr := 0x7f0000000000 + uint64(i%512)<<20
		act := []string{"alloc", "free_requested", "free_completed"}[i%3]
		b.WriteString(pdict(pstr("action"), pstr(act), pstr("addr"), "\x8a\x06"+string([]byte{byte(addr), byte(addr >> 8), byte(addr >> 16), byte(addr >> 24), byte(addr >> 32), byte(addr >> 40)}),
			pstr("size"), "M\x00\x10", pstr("stream"), "K\x00", pstr("time_us"), "J"+string([]byte{byte(i), byte(i >> 8), byte(i >> 16), 0}),
			pstr("frames"), plist(fr.String())))
	}
	b.WriteString("eeu.")
	return []byte(b.String())
}

// BenchmarkReader reads a snapshot of 20,000 entries of 12 frames each
// (reports/readers.md times larger ones against Python's pickle.load).
func BenchmarkReader(b *testing.B) {
	data := bigSnapshot(20000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := torchsnap.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		var ev traces.Event
		for r.Next(&ev) == nil {
		}
	}
}

func TestBigSnapshotReads(t *testing.T) {
	r, err := torchsnap.NewReader(bytes.NewReader(bigSnapshot(3000)))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Stats().Entries; got != 3000 {
		t.Errorf("%d entries, want 3000", got)
	}
	var ev traces.Event
	if r.Next(&ev); !strings.HasPrefix(ev.Site, "/opt/venv/") || !strings.Contains(ev.Site, ".py:") {
		t.Errorf("first site %q", ev.Site)
	}
}

// What a Reader holds once it has read a snapshot grows with the entries
// (about 50 bytes each), not with the pickle's bytes (about 450 an entry
// here): frames, names and dicts are gone.
func TestReaderHoldsLittle(t *testing.T) {
	const n = 20000
	data := bigSnapshot(n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := torchsnap.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if per := held / n; per > 128 {
		t.Errorf("the reader holds %d bytes for each entry (%d in all) of a pickle of %d bytes", per, held, len(data))
	}
	t.Logf("the reader holds %d bytes for each entry of %d bytes of pickle", held/n, len(data)/n)
	runtime.KeepAlive(r)
	runtime.KeepAlive(data)
}
