package traces

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAppendEvent checks the canonical form of every op.
func TestAppendEvent(t *testing.T) {
	for _, tt := range []struct {
		ev   Event
		want string
	}{
		{Event{Op: OpMalloc, Addr: 0x10, Size: 8}, `{"op":"malloc","addr":"0x10","size":8}`},
		{Event{Op: OpFree}, `{"op":"free","addr":"0x0"}`},
		{Event{Op: OpRealloc, Addr: 0x10, NewAddr: 0x20, Size: 9}, `{"op":"realloc","addr":"0x10","new_addr":"0x20","size":9}`},
		{Event{Op: OpRead, Addr: 0xABC}, `{"op":"read","addr":"0xabc"}`},
		{Event{Op: OpRead, Addr: 0x10, HasSize: true, Var: "x", Space: SpaceDevice}, `{"op":"read","addr":"0x10","size":0,"var":"x","space":"device"}`},
		{Event{Op: OpWrite, Addr: 0x10, Size: 8}, `{"op":"write","addr":"0x10"}`}, // Size without HasSize is not written
		{Event{Op: OpScopeEnter}, `{"op":"scope_enter"}`},
		{Event{Op: OpScopeExit}, `{"op":"scope_exit"}`},
		{Event{Op: OpAlloc, Addr: 0x10, Size: 8, Kind: "tensor"}, `{"op":"alloc","addr":"0x10","size":8,"kind":"tensor"}`},
		{Event{Op: OpStructInit, Addr: 0x10, Size: 8}, `{"op":"struct_init","addr":"0x10","size":8,"fields":[]}`},
		{Event{Op: OpStructInit, Addr: 0x10, Size: 8, Fields: []Addr{1, 0}}, `{"op":"struct_init","addr":"0x10","size":8,"fields":["0x1","0x0"]}`},
		{Event{Op: OpAcquire, Addr: 0x10}, `{"op":"acquire","addr":"0x10"}`},
		{Event{Op: OpRelease, Addr: 0x10}, `{"op":"release","addr":"0x10"}`},
		{Event{Op: OpRegister, Addr: 0x10}, `{"op":"register","addr":"0x10"}`},
		{Event{Op: OpUnregister, Addr: 0x10}, `{"op":"unregister","addr":"0x10"}`},
		{Event{Op: OpParamRegister, Name: "w", Addr: 0x10}, `{"op":"param_register","name":"w","addr":"0x10"}`},
		{Event{Op: OpParamRelease, Name: ""}, `{"op":"param_release","name":""}`},
		{Event{Op: OpEnd, Site: "a.tl:1", T: -1, Thread: "7"}, `{"op":"end","site":"a.tl:1","t":-1,"thread":"7"}`},
		{Event{Op: OpFnEnter, Slots: 4}, `{"op":"fn_enter","slots":4}`},
		{Event{Op: OpFnExit}, `{"op":"fn_exit"}`},
		{Event{Op: OpArenaGet, Slot: 1, Addr: 0x10, Size: 8, Var: "h"}, `{"op":"arena_get","slot":1,"addr":"0x10","size":8,"var":"h"}`},
		{Event{Op: OpDevMalloc, Addr: 0x10, Size: 8}, `{"op":"dev_malloc","addr":"0x10","size":8}`},
		{Event{Op: OpDevFree, Addr: 0x10}, `{"op":"dev_free","addr":"0x10"}`},
		{Event{Op: OpPoolGet, Addr: 0x10, Size: 8}, `{"op":"pool_get","addr":"0x10","size":8}`},
		{Event{Op: OpPoolPut, Addr: 0x10}, `{"op":"pool_put","addr":"0x10"}`},
		// Fields the op does not have are left out.
		{Event{Op: OpFree, Addr: 0x10, Size: 8, Name: "n", Var: "v", Kind: "k", Fields: []Addr{1}, Space: SpaceDevice}, `{"op":"free","addr":"0x10"}`},
		// Strings are escaped; bytes that are not UTF-8 become U+FFFD.
		{Event{Op: OpEnd, Site: "a\"b\\c\n\r\t\x01\u2028é\xff"}, `{"op":"end","site":"a\"b\\c\n\r\t\u0001` + "\u2028é" + `\ufffd"}`},
	} {
		if got := string(AppendEvent(nil, &tt.ev)); got != tt.want {
			t.Errorf("AppendEvent(%+v)\n got %s\nwant %s", tt.ev, got, tt.want)
		}
	}
}

// TestWriterLayouts writes one trace in both layouts: the exact bytes, and
// the same events at the same lines when read back.
func TestWriterLayouts(t *testing.T) {
	h := Header{Effects: true, Source: "test \"rt\""}
	evs := []Event{{Op: OpScopeEnter}, {Op: OpAlloc, Addr: 0x10, Size: 8, Site: "a.tl:1"}, {Op: OpEnd}}
	wantStream := `{"format":"tlcheck-trace","version":1,"effects":true,"source":"test \"rt\""}
{"op":"scope_enter"}
{"op":"alloc","addr":"0x10","size":8,"site":"a.tl:1"}
{"op":"end"}
`
	wantDoc := `{"format":"tlcheck-trace","version":1,"effects":true,"source":"test \"rt\"","events":[
{"op":"scope_enter"},
{"op":"alloc","addr":"0x10","size":8,"site":"a.tl:1"},
{"op":"end"}
]}
`
	for _, tt := range []struct {
		name string
		new  func(*bytes.Buffer) *Writer
		want string
	}{
		{"stream", func(b *bytes.Buffer) *Writer { return NewWriter(b, h) }, wantStream},
		{"document", func(b *bytes.Buffer) *Writer { return NewDocumentWriter(b, h) }, wantDoc},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			w := tt.new(&b)
			for i := range evs {
				if err := w.Write(&evs[i]); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Fatalf("wrote\n%s\nwant\n%s", b.String(), tt.want)
			}
			gotH, got, pos, err := readAll(&b)
			if err != nil {
				t.Fatal(err)
			}
			h.Format, h.Version = FormatName, Version
			if gotH != h {
				t.Errorf("header = %+v, want %+v", gotH, h)
			}
			if diff := cmp.Diff(evs, got, equateEvents); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			for i, p := range pos {
				if p.Line != i+2 {
					t.Errorf("event %d at line %d, want %d", i, p.Line, i+2)
				}
			}
		})
	}
}

// TestWriterEmptyDocument writes a document with no events.
func TestWriterEmptyDocument(t *testing.T) {
	var b bytes.Buffer
	w := NewDocumentWriter(&b, Header{})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if want := "{\"format\":\"tlcheck-trace\",\"version\":1,\"effects\":false,\"events\":[\n]}\n"; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
	if err := w.Write(&Event{Op: OpEnd}); err == nil {
		t.Error("Write after Close succeeded")
	}
}

// TestWriterRejects checks that Write refuses what no reader would accept.
func TestWriterRejects(t *testing.T) {
	for _, tt := range []struct {
		ev   Event
		want string
	}{
		{Event{}, "traces: writing event 0: no such op invalid"},
		{Event{Op: opCount}, "traces: writing event 0: no such op " + opCount.String()},
		{Event{Op: OpFnEnter, Slots: -1}, "traces: writing event 0: fn_enter: slots -1 is not between 0 and 2147483647"},
		{Event{Op: OpArenaGet, Slot: 1 << 31}, "traces: writing event 0: arena_get: slot 2147483648 is not between 0 and 2147483647"},
	} {
		var b bytes.Buffer
		w := NewWriter(&b, Header{})
		err := w.Write(&tt.ev)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Write(%+v) = %v, want %s", tt.ev, err, tt.want)
		}
		if err := w.Flush(); err != nil || strings.Count(b.String(), "\n") != 1 {
			t.Errorf("after a refused event: Flush() = %v, output %q; want the header alone", err, b.String())
		}
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errBoom }

var errBoom = errors.New("boom")

// TestWriterSticky checks that a failed write fails every later call.
func TestWriterSticky(t *testing.T) {
	w := NewWriter(failWriter{}, Header{})
	if err := w.Flush(); err == nil {
		t.Fatal("Flush to a failing writer succeeded")
	}
	if err := w.Write(&Event{Op: OpEnd}); err == nil {
		t.Error("Write after a failure succeeded")
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failure succeeded")
	}
}
