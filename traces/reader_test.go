package traces

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// inputs gives the ways a test feeds the same bytes to a Reader: seekable,
// not seekable (a pipe), and one byte per Read (every refill path).
func inputs(data []byte) map[string]func() io.Reader {
	return map[string]func() io.Reader{
		"seekable": func() io.Reader { return bytes.NewReader(data) },
		"pipe":     func() io.Reader { return noSeek{bytes.NewReader(data)} },
		"bytewise": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
	}
}

// allOps is the event list of testdata/format/all-ops.jsonl.
var allOps = []Event{
	{Op: OpMalloc, Addr: 0x1000, Size: 64, Site: "main.c:10", T: 1000, Thread: "main"},
	{Op: OpWrite, Addr: 0x1000, Size: 8, HasSize: true, Var: "buf"},
	{Op: OpRead, Addr: 4104},
	{Op: OpRealloc, Addr: 0x1000, NewAddr: 0x2000, Size: 128, Site: "main.c:12"},
	{Op: OpFree, Addr: 0x2000, Thread: "7"},
	{Op: OpScopeEnter},
	{Op: OpAlloc, Addr: 0x3000, Size: 256, Kind: "tensor", Site: "train.tl:3"},
	{Op: OpAlloc, Addr: 0x3100, Size: 32, Site: "train.tl:4"},
	{Op: OpStructInit, Addr: 0x3200, Size: 16, Fields: []Addr{0x3000, 0}, Site: "train.tl:5"},
	{Op: OpAcquire, Addr: 0x3100},
	{Op: OpRelease, Addr: 0x3100},
	{Op: OpUnregister, Addr: 0x3100},
	{Op: OpScopeEnter},
	{Op: OpRegister, Addr: 0x3100},
	{Op: OpScopeExit},
	{Op: OpParamRegister, Name: "w", Addr: 0x3000},
	{Op: OpScopeExit},
	{Op: OpParamRelease, Name: "w"},
	{Op: OpFnEnter, Slots: 2},
	{Op: OpArenaGet, Slot: 0, Addr: 0x8000, Size: 64, Var: "x"},
	{Op: OpWrite, Addr: 0x8000, Var: "x"},
	{Op: OpArenaGet, Slot: 1, Addr: 0x8040, Size: 64, Var: "y"},
	{Op: OpRead, Addr: 0x8040, Size: 64, HasSize: true, Var: "y"},
	{Op: OpFnExit},
	{Op: OpDevMalloc, Addr: 0x7f0000000000, Size: 1048576},
	{Op: OpPoolGet, Addr: 0x7f0000000000, Size: 4096},
	{Op: OpWrite, Addr: 0x7f0000000000, Size: 4, HasSize: true, Space: SpaceDevice},
	{Op: OpPoolPut, Addr: 0x7f0000000000},
	{Op: OpDevFree, Addr: 0x7f0000000000},
	{Op: OpEnd},
}

// TestReadFormatFiles reads the same events from the three layouts of
// testdata/format (a stream, a document with its header first, and one
// with its keys sorted, so that the header comes after the events), each
// fed three ways, and checks every event's position.
func TestReadFormatFiles(t *testing.T) {
	for _, tt := range []struct {
		file string
		line func(i int) int // the line event i starts on
	}{
		{"all-ops.jsonl", func(i int) int { return i + 2 }},
		{"all-ops.json", func(i int) int { return i + 3 }},
		{"header-last.json", func(int) int { return 1 }},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "format", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		for how, in := range inputs(data) {
			t.Run(tt.file+"/"+how, func(t *testing.T) {
				h, evs, pos, err := readAll(in())
				if err != nil {
					t.Fatal(err)
				}
				if h.Format != FormatName || h.Version != Version || h.Effects || !strings.HasPrefix(h.Source, "hand-written") {
					t.Errorf("header = %+v", h)
				}
				if diff := cmp.Diff(allOps, evs, equateEvents); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
				for i, p := range pos {
					if p.Event != i || p.Line != tt.line(i) {
						t.Errorf("event %d: Pos() = %+v, want {Event:%d Line:%d}", i, p, i, tt.line(i))
					}
				}
			})
		}
	}
}

// stream and document wrap event lines in either layout.
func stream(header string, events ...string) string {
	return header + "\n" + strings.Join(events, "\n") + "\n"
}

func document(header string, events ...string) string {
	return strings.TrimSuffix(header, "}") + `,"events":[` + strings.Join(events, ",\n") + "]}"
}

const plainHeader = `{"format":"tlcheck-trace","version":1}`

// TestReadEvents reads single events of every op and every form of value,
// in both layouts.
func TestReadEvents(t *testing.T) {
	for _, tt := range []struct {
		name, json string
		want       Event
	}{
		// Every op, with its required fields.
		{"malloc", `{"op":"malloc","addr":"0x10","size":8}`, Event{Op: OpMalloc, Addr: 0x10, Size: 8}},
		{"free", `{"op":"free","addr":"0x10"}`, Event{Op: OpFree, Addr: 0x10}},
		{"realloc", `{"op":"realloc","addr":"0x10","new_addr":"0x20","size":9}`, Event{Op: OpRealloc, Addr: 0x10, NewAddr: 0x20, Size: 9}},
		{"read", `{"op":"read","addr":"0x10"}`, Event{Op: OpRead, Addr: 0x10}},
		{"write", `{"op":"write","addr":"0x10"}`, Event{Op: OpWrite, Addr: 0x10}},
		{"scope_enter", `{"op":"scope_enter"}`, Event{Op: OpScopeEnter}},
		{"scope_exit", `{"op":"scope_exit"}`, Event{Op: OpScopeExit}},
		{"alloc", `{"op":"alloc","addr":"0x10","size":8}`, Event{Op: OpAlloc, Addr: 0x10, Size: 8}},
		{"struct_init", `{"op":"struct_init","addr":"0x10","size":8,"fields":[]}`, Event{Op: OpStructInit, Addr: 0x10, Size: 8}},
		{"acquire", `{"op":"acquire","addr":"0x10"}`, Event{Op: OpAcquire, Addr: 0x10}},
		{"release", `{"op":"release","addr":"0x10"}`, Event{Op: OpRelease, Addr: 0x10}},
		{"register", `{"op":"register","addr":"0x10"}`, Event{Op: OpRegister, Addr: 0x10}},
		{"unregister", `{"op":"unregister","addr":"0x10"}`, Event{Op: OpUnregister, Addr: 0x10}},
		{"param_register", `{"op":"param_register","name":"w","addr":"0x10"}`, Event{Op: OpParamRegister, Name: "w", Addr: 0x10}},
		{"param_release", `{"op":"param_release","name":"w"}`, Event{Op: OpParamRelease, Name: "w"}},
		{"end", `{"op":"end"}`, Event{Op: OpEnd}},
		{"fn_enter", `{"op":"fn_enter","slots":3}`, Event{Op: OpFnEnter, Slots: 3}},
		{"fn_exit", `{"op":"fn_exit"}`, Event{Op: OpFnExit}},
		{"arena_get", `{"op":"arena_get","slot":2,"addr":"0x10","size":8}`, Event{Op: OpArenaGet, Slot: 2, Addr: 0x10, Size: 8}},
		{"dev_malloc", `{"op":"dev_malloc","addr":"0x10","size":8}`, Event{Op: OpDevMalloc, Addr: 0x10, Size: 8}},
		{"dev_free", `{"op":"dev_free","addr":"0x10"}`, Event{Op: OpDevFree, Addr: 0x10}},
		{"pool_get", `{"op":"pool_get","addr":"0x10","size":8}`, Event{Op: OpPoolGet, Addr: 0x10, Size: 8}},
		{"pool_put", `{"op":"pool_put","addr":"0x10"}`, Event{Op: OpPoolPut, Addr: 0x10}},

		// Optional fields.
		{"read all", `{"op":"read","addr":"0x10","size":4,"var":"x","space":"device"}`, Event{Op: OpRead, Addr: 0x10, Size: 4, HasSize: true, Var: "x", Space: SpaceDevice}},
		{"write heap", `{"op":"write","addr":"0x10","space":"heap","size":0}`, Event{Op: OpWrite, Addr: 0x10, HasSize: true}},
		{"alloc kind", `{"op":"alloc","addr":"0x10","size":8,"kind":"tensor"}`, Event{Op: OpAlloc, Addr: 0x10, Size: 8, Kind: "tensor"}},
		{"arena_get var", `{"op":"arena_get","slot":0,"addr":"0x10","size":8,"var":"h"}`, Event{Op: OpArenaGet, Addr: 0x10, Size: 8, Var: "h"}},
		{"site t thread", `{"op":"end","site":"a.tl:1","t":-5,"thread":"gc"}`, Event{Op: OpEnd, Site: "a.tl:1", T: -5, Thread: "gc"}},
		{"thread number as written", `{"op":"end","thread":-12e0}`, Event{Op: OpEnd, Thread: "-12e0"}},
		{"thread integer", `{"op":"end","thread":12}`, Event{Op: OpEnd, Thread: "12"}},
		{"null optional", `{"op":"read","addr":"0x10","size":null,"var":null,"space":null,"site":null,"t":null,"thread":null}`, Event{Op: OpRead, Addr: 0x10}},
		{"struct fields", `{"op":"struct_init","addr":"0x10","size":8,"fields":["0x1",2,"0x0"]}`, Event{Op: OpStructInit, Addr: 0x10, Size: 8, Fields: []Addr{1, 2, 0}}},

		// Values.
		{"addr NULL", `{"op":"free","addr":"0x0"}`, Event{Op: OpFree}},
		{"addr mixed case", `{"op":"free","addr":"0XaBcD"}`, Event{Op: OpFree, Addr: 0xabcd}},
		{"addr leading zeros", `{"op":"free","addr":"0x0000000000000000000000ff"}`, Event{Op: OpFree, Addr: 0xff}},
		{"addr max hex", `{"op":"free","addr":"0xffffffffffffffff"}`, Event{Op: OpFree, Addr: 1<<64 - 1}},
		{"addr integer", `{"op":"free","addr":4096}`, Event{Op: OpFree, Addr: 4096}},
		{"addr max integer", `{"op":"free","addr":18446744073709551615}`, Event{Op: OpFree, Addr: 1<<64 - 1}},
		{"size exponent", `{"op":"malloc","addr":"0x10","size":1.5e3}`, Event{Op: OpMalloc, Addr: 0x10, Size: 1500}},
		{"size integral fraction", `{"op":"malloc","addr":"0x10","size":64.000}`, Event{Op: OpMalloc, Addr: 0x10, Size: 64}},
		{"size minus zero", `{"op":"malloc","addr":"0x10","size":-0}`, Event{Op: OpMalloc, Addr: 0x10}},
		{"size big exponent form", `{"op":"malloc","addr":"0x1","size":1844674407370955161.5e1}`, Event{Op: OpMalloc, Addr: 0x1, Size: 1<<64 - 1}},
		{"t min", `{"op":"end","t":-9223372036854775808}`, Event{Op: OpEnd, T: -1 << 63}},
		{"slots max", `{"op":"fn_enter","slots":2147483647}`, Event{Op: OpFnEnter, Slots: 1<<31 - 1}},
		{"escapes", `{"op":"end","site":"a\"b\\c\/d\b\f\n\r\t\u00e9\u20AC\ud83d\ude00"}`, Event{Op: OpEnd, Site: "a\"b\\c/d\b\f\n\r\t\u00e9\u20ac\U0001F600"}},
		{"lone surrogates", `{"op":"end","site":"\ud800x\udc00\ud800\u0041"}`, Event{Op: OpEnd, Site: "\ufffdx\ufffd\ufffdA"}},
		{"raw UTF-8", `{"op":"end","site":"größe.tl:1 😀"}`, Event{Op: OpEnd, Site: "größe.tl:1 😀"}},

		// Keys.
		{"op last", `{"addr":"0x10","size":8,"op":"malloc"}`, Event{Op: OpMalloc, Addr: 0x10, Size: 8}},
		{"duplicate key: last wins", `{"op":"free","addr":"0x10","addr":"0x20","op":"release"}`, Event{Op: OpRelease, Addr: 0x20}},
		{"duplicate then null", `{"op":"end","site":"a","site":null}`, Event{Op: OpEnd}},
		{"unknown fields", `{"x":{"a":[1,{"b":null},"]}"],"c":-1.5e-3},"op":"free","y":[],"z":{},"addr":"0x10","w":false}`, Event{Op: OpFree, Addr: 0x10}},
		{"fields of other ops dropped", `{"op":"free","addr":"0x10","size":8,"name":"n","fields":["0x1"],"slot":1,"var":"v","space":"device","kind":"k","new_addr":"0x2","slots":3}`, Event{Op: OpFree, Addr: 0x10}},
		{"size on malloc is not HasSize", `{"op":"malloc","addr":"0x10","size":8}`, Event{Op: OpMalloc, Addr: 0x10, Size: 8}},
		{"white space", "{ \"op\" :\t\"free\" , \"addr\" : \"0x10\" }", Event{Op: OpFree, Addr: 0x10}},
	} {
		for layout, text := range map[string]string{
			"stream":   stream(plainHeader, `{"op":"scope_enter"}`, tt.json),
			"document": document(plainHeader, `{"op":"scope_enter"}`, tt.json),
		} {
			t.Run(tt.name+"/"+layout, func(t *testing.T) {
				_, evs, pos, err := readAll(strings.NewReader(text))
				if err != nil {
					t.Fatal(err)
				}
				if len(evs) != 2 {
					t.Fatalf("read %d events, want 2", len(evs))
				}
				if diff := cmp.Diff(tt.want, evs[1], equateEvents); diff != "" {
					t.Errorf("%s: (-want +got):\n%s", tt.json, diff)
				}
				if want := (Pos{Event: 1, Line: 2}); layout == "document" && pos[1] != want {
					t.Errorf("Pos() = %+v, want %+v", pos[1], want)
				} else if want := (Pos{Event: 1, Line: 3}); layout == "stream" && pos[1] != want {
					t.Errorf("Pos() = %+v, want %+v", pos[1], want)
				}
			})
		}
	}
}

// TestReadHeaders reads headers of both layouts, in any key order.
func TestReadHeaders(t *testing.T) {
	end := `{"op":"end"}`
	for _, tt := range []struct {
		name, text string
		want       Header
		line       int // the line of the end event
	}{
		{"stream", stream(`{"format":"tlcheck-trace","version":1}`, end), Header{}, 2},
		{"stream all fields", stream(`{"version":1,"source":"rt 0.3","x":[{}],"effects":true,"format":"tlcheck-trace"}`, end), Header{Effects: true, Source: "rt 0.3"}, 2},
		{"stream null fields", stream(`{"format":"tlcheck-trace","version":1.0,"effects":null,"source":null}`, end), Header{}, 2},
		{"stream blank lines first", "\n\r\n" + stream(plainHeader, end), Header{}, 4},
		{"stream no final newline", plainHeader + "\n" + end, Header{}, 2},
		{"stream no events", plainHeader, Header{}, 0},
		{"document", document(`{"format":"tlcheck-trace","version":1,"effects":true}`, end), Header{Effects: true}, 1},
		{"document no events", `{"format":"tlcheck-trace","version":1,"events":[]}`, Header{}, 0},
		{"document pretty", "{\n  \"format\": \"tlcheck-trace\",\n  \"version\": 1,\n  \"events\": [\n    {\"op\": \"end\"}\n  ]\n}\n", Header{}, 5},
		{"document source after events", `{"format":"tlcheck-trace","version":1,"events":[{"op":"end"}],"source":"late","effects":false}`, Header{Source: "late"}, 1},
		{"document header after events", `{"events":[{"op":"end"}],"version":1,"effects":true,"format":"tlcheck-trace","source":"s"}`, Header{Effects: true, Source: "s"}, 1},
		{"document header around events", "{\"effects\":true,\"events\":[\n{\"op\":\"end\"}\n],\"format\":\"tlcheck-trace\",\"version\":1}", Header{Effects: true}, 2},
	} {
		tt.want.Format, tt.want.Version = FormatName, Version
		for how, in := range inputs([]byte(tt.text)) {
			t.Run(tt.name+"/"+how, func(t *testing.T) {
				h, evs, pos, err := readAll(in())
				if err != nil {
					t.Fatal(err)
				}
				if h != tt.want {
					t.Errorf("header = %+v, want %+v", h, tt.want)
				}
				if tt.line == 0 {
					if len(evs) != 0 {
						t.Errorf("read %d events, want none", len(evs))
					}
					return
				}
				if len(evs) != 1 || evs[0].Op != OpEnd || pos[0] != (Pos{Line: tt.line}) {
					t.Errorf("events %+v at %+v, want one end event at line %d", evs, pos, tt.line)
				}
			})
		}
	}
}
