package torchsnap_test

import (
	"bytes"
	"errors"
	"github.com/tlcheck/tlcheck/traces"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ogorek "github.com/kisielk/og-rek"

	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// pickled encodes v as Python's pickle would (protocol 4), for snapshots of
// the wrong shape.
func pickled(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := ogorek.NewEncoderWithConfig(&b, &ogorek.EncoderConfig{Protocol: 4}).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// snap is a snapshot with one device trace of the given entries.
func snap(entries ...map[any]any) map[any]any {
	list := make([]any, len(entries))
	for i, e := range entries {
		list[i] = e
	}
	return map[any]any{"segments": []any{}, "device_traces": []any{list}}
}

// Every bad snapshot is an error that names what is wrong and where,
// never a panic, and never an allocation as large as a declared length.
func TestBadSnapshots(t *testing.T) {
	clean, err := os.ReadFile(filepath.Join("testdata", "clean-p4.pickle"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		lim  torchsnap.Limits
		want string
	}{
		{"empty", nil, torchsnap.Limits{}, "empty input"},
		{"truncated", clean[:len(clean)/2], torchsnap.Limits{}, "truncated"},
		{"no STOP", []byte("\x80\x04}"), torchsnap.Limits{}, "byte 3: truncated: the pickle ends without STOP"},
		{"GLOBAL", []byte("\x80\x02cos\nsystem\n(S'ls'\ntR."), torchsnap.Limits{}, "byte 2: opcode GLOBAL would import a Python name (0x63)"},
		{"STACK_GLOBAL", []byte("\x80\x04\x8c\x02os\x8c\x06system\x93."), torchsnap.Limits{}, "byte 14: opcode STACK_GLOBAL would import"},
		{"REDUCE", []byte("\x80\x04N)R."), torchsnap.Limits{}, "byte 4: opcode REDUCE would call Python code"},
		{"BUILD", []byte("\x80\x04}}b."), torchsnap.Limits{}, "BUILD would call Python code"},
		{"persistent id", []byte("\x80\x04NQ."), torchsnap.Limits{}, "BINPERSID asks the loader for an outside object"},
		{"huge string", []byte("\x80\x04X\xff\xff\xff\xff"), torchsnap.Limits{}, "byte 2: truncated: BINUNICODE declares 4294967295 bytes, 0 remain"},
		{"huge bytes8", []byte("\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\xff"), torchsnap.Limits{}, "byte 2: truncated: BINBYTES8 declares 18446744073709551615 bytes, 0 remain"},
		{"huge frame", []byte("\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\xff}."), torchsnap.Limits{}, "byte 2: truncated: FRAME declares more bytes than any input holds"},
		{"unknown opcode", []byte("\x80\x04\xff."), torchsnap.Limits{}, "byte 2: unknown pickle opcode 0xff"},
		{"protocol 6", []byte("\x80\x06}."), torchsnap.Limits{}, "PROTO 6"},
		{"after STOP", []byte("\x80\x04}.junk"), torchsnap.Limits{}, "4 bytes after the pickle's STOP"},
		{"long LONG", []byte("\x80\x02L" + strings.Repeat("9", 100) + "L\n."), torchsnap.Limits{}, "byte 2: LONG of more than 40 digits"},
		{"stack underflow", []byte("\x80\x04a."), torchsnap.Limits{}, "malformed pickle"},
		{"text", []byte("hello world\n"), torchsnap.Limits{}, "does not start with PROTO"},
		{"too big", clean, torchsnap.Limits{MaxBytes: 100}, "larger than 100 bytes"},

		{"a list", pickled(t, []any{}), torchsnap.Limits{}, "snapshot: want a dict with segments and device_traces, got a list (an old snapshot of segments alone"},
		{"no traces", pickled(t, map[any]any{"segments": []any{}}), torchsnap.Limits{}, "_record_memory_history()"},
		{"no segments", pickled(t, map[any]any{"device_traces": []any{}}), torchsnap.Limits{}, `no "segments"`},
		{"traces not a list", pickled(t, map[any]any{"segments": []any{}, "device_traces": int64(3)}), torchsnap.Limits{}, "device_traces: want a list, got int 3"},
		{"addr a string", pickled(t, snap(map[any]any{"action": "alloc", "addr": "0x10", "size": int64(8)})), torchsnap.Limits{}, `device_traces[0][0].addr: want a non-negative integer below 2^64, got str "0x10"`},
		{"negative size", pickled(t, snap(map[any]any{"action": "alloc", "addr": int64(16), "size": int64(-8)})), torchsnap.Limits{}, "device_traces[0][0].size: want a non-negative integer"},
		{"no addr", pickled(t, snap(map[any]any{"action": "free_completed"})), torchsnap.Limits{}, `device_traces[0][0]: missing "addr"`},
		{"unknown action", pickled(t, snap(map[any]any{"action": "explode"})), torchsnap.Limits{}, `device_traces[0][0].action: unknown action "explode"`},
		{"segment_map without size", pickled(t, snap(map[any]any{"action": "segment_map", "addr": int64(16)})), torchsnap.Limits{}, `device_traces[0][0]: missing "size"`},
		{"is_expandable not a bool", pickled(t, map[any]any{"device_traces": []any{}, "segments": []any{map[any]any{"address": int64(0), "total_size": int64(8), "is_expandable": int64(1)}}}), torchsnap.Limits{}, `segments[0].is_expandable: want a bool, got int 1`},
		{"bad frames", pickled(t, snap(map[any]any{"action": "alloc", "addr": int64(16), "size": int64(8), "frames": []any{int64(1)}})), torchsnap.Limits{}, "device_traces[0][0].frames[0]: want a dict, got int 1"},
		{"bad state", pickled(t, map[any]any{"device_traces": []any{}, "segments": []any{map[any]any{"address": int64(0), "total_size": int64(8), "blocks": []any{map[any]any{"size": int64(8), "state": "weird"}}}}}), torchsnap.Limits{}, `segments[0].blocks[0].state: unknown block state "weird"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := torchsnap.NewReaderLimits(bytes.NewReader(tt.data), tt.lim)
			if err == nil {
				t.Fatalf("read without error; want one containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
			var te *torchsnap.Error
			if !errors.As(err, &te) {
				t.Errorf("error %q is not a *torchsnap.Error", err)
			}
		})
	}
}

// A pickle can refer to one value many times for two bytes each; reading
// must stay in proportion to the pickle's size all the same.
func TestSharedValues(t *testing.T) {
	s := func(v string) string { return "\x8c" + string(rune(len(v))) + v }
	// device_traces is one list of one entry, referred to n times: n
	// devices with the same trace, as Python reads it.
	const n = 200000
	shared := "\x80\x04}(" + s("segments") + "]" + s("device_traces") + "](" +
		"]\x94(}(" + s("action") + s("snapshot") + "ue" + strings.Repeat("h\x00", 999) + "e" +
		strings.Repeat("("+strings.Repeat("h\x00", 1000)+"e", n/1000-1) + "u." // in batches of 1000, as Python's pickler writes
	r, err := torchsnap.NewReader(strings.NewReader(shared))
	if err != nil {
		t.Fatalf("shared traces: %v", err)
	}
	if got := r.Stats().Entries; got != n {
		t.Errorf("shared traces: %d entries, want %d", got, n)
	}

	// n entries share one frames list whose one frame has a filename of
	// 60 KiB: the site is made once.
	const long = 60 << 10
	frames := "]\x94}(" + s("filename") + "X\x00\xf0\x00\x00" + strings.Repeat("x", long) + s("line") + "K\x07ua"
	entry := "}(" + s("action") + s("alloc") + s("addr") + "K\x10" + s("size") + "K\x08" + s("frames") + "h\x00u"
	p := "\x80\x04" + frames + "0" + // the frames list, memoized (index 0) and popped
		"}(" + s("segments") + "]" + s("device_traces") + "](](" + strings.Repeat(entry, 2000) + "eeu."
	r, err = torchsnap.NewReader(strings.NewReader(p))
	if err != nil {
		t.Fatal(err)
	}
	var ev traces.Event
	for r.Next(&ev) == nil {
		if len(ev.Site) != long+2 {
			t.Fatalf("site of %d bytes", len(ev.Site))
		}
	}
}
