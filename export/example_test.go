package export_test

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/export"
	"github.com/tlcheck/tlcheck/traces"
)

// Write replays a trace and writes it as a Perfetto timeline; the Summary
// is the model's verdict, the same whatever the format.
func ExampleWrite() {
	const trace = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x100","size":100,"site":"a.c:1"}
{"op":"malloc","addr":"0x200","size":200,"site":"b.c:2"}
{"op":"free","addr":"0x200"}
{"op":"end"}
`
	r, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		panic(err)
	}
	var out bytes.Buffer
	sum, err := export.Write(&out, export.Perfetto, r, export.Options{Name: "a.jsonl"})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d violation: %d leak; leaked %d bytes, peak %d bytes\n",
		sum.Violations, sum.ByKind[traces.Leak], sum.Report.Leaked.Bytes, sum.Report.PeakLiveBytes)
	fmt.Println(strings.Count(out.String(), `"ph":"b"`), "lives drawn")
	// Output:
	// 1 violation: 1 leak; leaked 100 bytes, peak 300 bytes
	// 2 lives drawn
}

// The HTML page shows results of other analyses beside the model's: leak
// suspects, marked on its timeline at the events that made their blocks,
// and an out-of-memory explanation.
func ExamplePageExtras() {
	const trace = `{"format":"tlcheck-trace","version":1}
{"op":"dev_malloc","addr":"0x10000","size":65536}
{"op":"pool_get","addr":"0x10000","size":512,"site":"loss.py:3059"}
{"op":"pool_get","addr":"0x10200","size":512,"site":"loss.py:3059"}
`
	r, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		panic(err)
	}
	extras := &export.PageExtras{Suspects: []export.PageSuspect{{
		Site: "loss.py:3059", BytesPerIteration: 512, BlocksPerIteration: 1,
		Iterations: 2, Confidence: "2 iterations, steady", Events: []int{1, 2},
	}}}
	var page bytes.Buffer
	if _, err := export.Write(&page, export.HTML, r, export.Options{Name: "loop", Page: extras}); err != nil {
		panic(err)
	}
	fmt.Println(strings.Contains(page.String(), `"confidence":"2 iterations, steady"`))
	// Output:
	// true
}
