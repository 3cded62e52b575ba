package torchsnap_test

import (
	"bytes"
	"fmt"

	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// A snapshot's trace entries become layer-4 events; free_requested yields
// none, since the block is not free until free_completed.
func Example() {
	var pickle bytes.Buffer
	w := torchsnap.NewWriter(&pickle)
	for _, e := range []torchsnap.Entry{
		{Action: torchsnap.ActionSegmentAlloc, Addr: 0x7f0000000000, Size: 2 << 20},
		{Action: torchsnap.ActionAlloc, Addr: 0x7f0000000000, Size: 512, Site: "train.py:42"},
		{Action: torchsnap.ActionFreeRequested, Addr: 0x7f0000000000, Size: 512, Site: "train.py:42"},
		{Action: torchsnap.ActionFreeCompleted, Addr: 0x7f0000000000, Size: 512, Site: "train.py:42"},
	} {
		w.Write(e)
	}
	w.Close([]torchsnap.Segment{{Addr: 0x7f0000000000, Size: 2 << 20}})

	r, err := torchsnap.NewReader(&pickle)
	if err != nil {
		fmt.Println(err)
		return
	}
	var ev traces.Event
	for r.Next(&ev) == nil {
		fmt.Printf("%s %s size %d site %q\n", ev.Op, ev.Addr, ev.Size, ev.Site)
	}
	// Output:
	// dev_malloc 0x7f0000000000 size 2097152 site ""
	// pool_get 0x7f0000000000 size 512 site "train.py:42"
	// pool_put 0x7f0000000000 size 0 site "train.py:42"
}

// A pickle that would call code is refused before it is decoded.
func ExampleNewReader_refused() {
	_, err := torchsnap.NewReader(bytes.NewReader([]byte("\x80\x02cos\nsystem\n(S'ls'\ntR.")))
	fmt.Println(err)
	// Output:
	// byte 2: opcode GLOBAL would import a Python name (0x63): a memory snapshot holds only dicts, lists, strings and numbers
}
