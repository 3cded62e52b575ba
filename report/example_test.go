package report_test

import (
	"os"
	"strings"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/report"
	"github.com/tlcheck/tlcheck/traces"
)

// The human report of one trace: each finding with the events that explain
// it, then the summary and totals.
func ExampleWrite() {
	const trace = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":8,"site":"a.c:1"}
{"op":"free","addr":"0x10","site":"a.c:2"}
{"op":"free","addr":"0x10","site":"a.c:3"}
{"op":"end"}
`
	r, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		panic(err)
	}
	p := &check.Policy{}
	o := check.Source("a.jsonl", r, p, 0)
	report.Write(os.Stdout, report.Text, []check.Outcome{o}, p, report.Run{Command: "replay"})
	// Output:
	// ERROR: double-free at event 2 (line 4, a.c:3): addr 0x10, object #1
	//   free of block #1 (8 bytes, allocated at event 0 a.c:1), which was freed at event 1 a.c:2
	//     allocated here: event 0 (line 2, a.c:1)
	//     freed here: event 1 (line 3, a.c:2)
	//
	// SUMMARY: 1 violation: 1 double-free
	//   events 4, objects 1, peak live bytes 8
	//   leaked 0 objects (0 bytes), still reachable 0 objects (0 bytes)
}
