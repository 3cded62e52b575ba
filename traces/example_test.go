package traces_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tlcheck/tlcheck/traces"
)

// Reading a trace: the same loop reads both layouts.
func ExampleReader() {
	const trace = `{"format":"tlcheck-trace","version":1,"effects":true,"source":"my runtime"}
{"op":"scope_enter"}
{"op":"alloc","addr":"0x1000","size":64,"site":"a.tl:2"}

{"op":"release","addr":4096,"site":"a.tl:3"}
{"op":"free","addr":"0x1000"}
`
	r, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", r.Header())
	var ev traces.Event
	for {
		err := r.Next(&ev)
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		pos := r.Pos()
		fmt.Printf("event %d, line %d: %s %s site=%q\n", pos.Event, pos.Line, ev.Op, ev.Addr, ev.Site)
	}
	// Output:
	// {Format:tlcheck-trace Version:1 Effects:true Source:my runtime}
	// event 0, line 2: scope_enter 0x0 site=""
	// event 1, line 3: alloc 0x1000 site="a.tl:2"
	// event 2, line 5: release 0x1000 site="a.tl:3"
	// event 3, line 6: free 0x1000 site=""
}

// An input error names its place: the caller adds the file name.
func ExampleError() {
	const trace = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":8}
{"op":"free","addr":true}
`
	r, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		fmt.Println(err)
		return
	}
	var ev traces.Event
	for err == nil {
		err = r.Next(&ev)
	}
	var te *traces.Error
	if errors.As(err, &te) {
		te.File = "trace.jsonl"
		fmt.Printf("line %d, event %d, field %q\n", te.Line, te.Event, te.Field)
	}
	fmt.Println(err)
	// Output:
	// line 3, event 1, field "addr"
	// trace.jsonl:3: event 1: field "addr": want a hex string or a non-negative integer, got true
}

// Writing a stream (JSON Lines): the header line, then one event a line.
func ExampleNewWriter() {
	w := traces.NewWriter(os.Stdout, traces.Header{Effects: true, Source: "example"})
	for _, ev := range []traces.Event{
		{Op: traces.OpScopeEnter},
		{Op: traces.OpAlloc, Addr: 0x1000, Size: 64, Site: "a.tl:2"},
		{Op: traces.OpStructInit, Addr: 0x2000, Size: 16, Fields: []traces.Addr{0x1000, 0}},
		{Op: traces.OpRead, Addr: 0x1008, Size: 8, HasSize: true, Var: "x"},
		{Op: traces.OpScopeExit},
		{Op: traces.OpEnd},
	} {
		if err := w.Write(&ev); err != nil {
			fmt.Println(err)
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"format":"tlcheck-trace","version":1,"effects":true,"source":"example"}
	// {"op":"scope_enter"}
	// {"op":"alloc","addr":"0x1000","size":64,"site":"a.tl:2"}
	// {"op":"struct_init","addr":"0x2000","size":16,"fields":["0x1000","0x0"]}
	// {"op":"read","addr":"0x1008","size":8,"var":"x"}
	// {"op":"scope_exit"}
	// {"op":"end"}
}

// Writing a document: Close writes its end.
func ExampleNewDocumentWriter() {
	w := traces.NewDocumentWriter(os.Stdout, traces.Header{})
	for _, ev := range []traces.Event{
		{Op: traces.OpMalloc, Addr: 0x7f3a10, Size: 32, Site: "main.c:10"},
		{Op: traces.OpFree, Addr: 0x7f3a10},
		{Op: traces.OpEnd},
	} {
		if err := w.Write(&ev); err != nil {
			fmt.Println(err)
		}
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"format":"tlcheck-trace","version":1,"effects":false,"events":[
	// {"op":"malloc","addr":"0x7f3a10","size":32,"site":"main.c:10"},
	// {"op":"free","addr":"0x7f3a10"},
	// {"op":"end"}
	// ]}
}

// AppendEvent gives an event's canonical JSON, for writers of other kinds.
func ExampleAppendEvent() {
	ev := traces.Event{Op: traces.OpArenaGet, Slot: 1, Addr: 0x8040, Size: 64, Var: "h", Thread: "7"}
	fmt.Println(string(traces.AppendEvent(nil, &ev)))
	// Output:
	// {"op":"arena_get","slot":1,"addr":"0x8040","size":64,"var":"h","thread":"7"}
}

// An event describes itself for messages from its op's row.
func ExampleEvent_String() {
	ev := traces.Event{Op: traces.OpArenaGet, Slot: 2, Addr: 0x1000, Size: 64, Var: "x"}
	fmt.Println(ev.String())
	ev = traces.Event{Op: traces.OpStructInit, Addr: 0x2000, Size: 16, Fields: []traces.Addr{0x1000, 0}}
	fmt.Println(ev.String())
	// Output:
	// arena_get slot 2 addr 0x1000 size 64 var x
	// struct_init addr 0x2000 size 16 fields ["0x1000","0x0"]
}
