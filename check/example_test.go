package check_test

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/traces"
)

// A gate: the baseline accepts one leak at main.c:5; the trace now leaks
// there and at util.c:17 as well. Only the new leak fails the run.
func ExampleOutcome_Compare() {
	const trace = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x100","size":64,"site":"main.c:5"}
{"op":"malloc","addr":"0x200","size":32,"site":"util.c:17"}
{"op":"end"}
`
	const baseline = `{"format": "tlcheck-baseline", "version": 1, "traces": [
  {"trace": "train.jsonl", "complete": true, "leaked_bytes": 64, "peak_live_bytes": 64,
   "findings": [{"kind": "leak", "site": "", "alloc_site": "main.c:5", "count": 1}]}]}
`
	r, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		panic(err)
	}
	b, err := check.ParseBaseline(strings.NewReader(baseline))
	if err != nil {
		panic(err)
	}
	p := &check.Policy{}
	o := check.Source("train.jsonl", r, p, 0)
	var tol check.Tolerance
	if err := tol.Set("64"); err != nil { // totals may grow by 64 bytes
		panic(err)
	}
	o.Compare(b.Find(check.TraceKey("train.jsonl")), tol)
	for i, v := range o.Report.Violations {
		fmt.Printf("%s of %s: known %t\n", v.Kind, check.FingerprintOf(&v).AllocSite, o.Known[i])
	}
	fmt.Println(o.Status(p), o.FailureReasons(p))
	// Output:
	// leak of main.c:5: known true
	// leak of util.c:17: known false
	// fail [1 new finding]
}
