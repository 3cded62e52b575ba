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
