package mtrace_test

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/mtrace"
)

func Example() {
	log := `= Start
@ ./prog:(main+0x1d)[0x401136] + 0x4052a0 0x20
@ ./prog:(main+0x2b)[0x401144] < 0x4052a0
@ ./prog:(main+0x2b)[0x401144] > 0x4056d0 0x40
`
	r := mtrace.NewReader(strings.NewReader(log))
	var ev traces.Event
	for r.Next(&ev) == nil {
		fmt.Printf("event %d, line %d: %s %s size %d %s\n", r.Pos().Event, r.Pos().Line, ev.Op, ev.Addr, ev.Size, ev.Site)
	}
	// Output:
	// event 0, line 2: malloc 0x4052a0 size 32 ./prog:(main+0x1d)[0x401136]
	// event 1, line 3: free 0x4052a0 size 0 ./prog:(main+0x2b)[0x401144]
	// event 2, line 4: malloc 0x4056d0 size 64 ./prog:(main+0x2b)[0x401144]
	// event 3, line 0: end 0x0 size 0
}

func ExampleSniff() {
	for _, first := range []string{
		"= Start\n@ ./prog:[0x11ce] + 0x55b8e54964a0 0x20\n",
		"+ 0x4052a0 0x20\n",
		`{"format":"tlcheck-trace","version":1}` + "\n",
	} {
		fmt.Println(mtrace.Sniff([]byte(first)))
	}
	// Output:
	// true
	// true
	// false
}
