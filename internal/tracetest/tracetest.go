// Package tracetest holds the small traces that the tests of more than
// one package replay or export (cmd/tlcheck's and export's), written once.
// It is for tests only, as testing/iotest is.
package tracetest

import (
	"encoding/json"
	"strings"
)

// StaleReuse is the contract's example: a stale scope record frees a new object that
// took the address of a dead one.
const StaleReuse = `{"format":"tlcheck-trace","version":1,"effects":true}
{"op":"scope_enter"}
{"op":"alloc","addr":"0x1000","size":64,"site":"a.tl:2"}
{"op":"release","addr":"0x1000","site":"a.tl:3"}
{"op":"free","addr":"0x1000"}
{"op":"alloc","addr":"0x1000","size":64,"site":"a.tl:4"}
{"op":"param_register","name":"w","addr":"0x1000"}
{"op":"scope_exit"}
{"op":"free","addr":"0x1000"}
`

// CleanDoc is a clean raw-heap trace, as one document.
const CleanDoc = `{"format":"tlcheck-trace","version":1,"source":"test","events":[
 {"op":"malloc","addr":"0x10","size":8,"site":"m.c:1"},
 {"op":"write","addr":"0x10","size":8},
 {"op":"free","addr":"0x10","site":"m.c:3"},
 {"op":"end"}
]}`

// DoubleFreeNoEnd is a double free in a stream that stops without end.
const DoubleFreeNoEnd = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x20","size":16,"site":"d.c:1"}
{"op":"free","addr":"0x20","site":"d.c:2"}
{"op":"free","addr":"0x20","site":"d.c:3"}
`

// TimedClean is a clean trace with times (ns), on the heap and on the device.
const TimedClean = `{"format":"tlcheck-trace","version":1,"source":"timed"}
{"op":"malloc","addr":"0x10","size":8,"site":"m.c:1","t":1500}
{"op":"dev_malloc","addr":"0x7000","size":4096,"site":"d.c:1","t":2500}
{"op":"free","addr":"0x10"}
{"op":"dev_free","addr":"0x7000","t":4000}
{"op":"end","t":5001}
`

// HostileSite is a site that is markup: the page must show it as text and run nothing.
const HostileSite = `<script>window.injected=1</script><img src=x onerror="window.injected=2">`

// HostileTrace leaks one block made at HostileSite and double-frees
// another: two findings.
var HostileTrace = `{"format":"tlcheck-trace","version":1,"source":"</title><script>window.injected=3</script>"}
{"op":"malloc","addr":"0x10","size":8,"site":` + jsonString(HostileSite) + `}
{"op":"malloc","addr":"0x20","size":16,"site":"ok.c:2"}
{"op":"free","addr":"0x20"}
{"op":"free","addr":"0x20","site":"ok.c:4"}
{"op":"dev_malloc","addr":"0x9000","size":4096}
{"op":"dev_free","addr":"0x9000"}
{"op":"end"}
`

// SitesTrace has three sites: a.c:1 allocates twice and leaks its second block, b.c:2's
// block is freed after the peak, c.c:3's block comes after the peak and
// leaks, and an mtrace-style site that is no file:line leaks 9 bytes.
// Live bytes peak at event 2 (600: a.c:1 400, b.c:2 200).
const SitesTrace = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x100","size":100,"site":"a.c:1"}
{"op":"malloc","addr":"0x200","size":200,"site":"b.c:2"}
{"op":"malloc","addr":"0x300","size":300,"site":"a.c:1"}
{"op":"free","addr":"0x200"}
{"op":"free","addr":"0x100"}
{"op":"malloc","addr":"0x400","size":50,"site":"c.c:3"}
{"op":"malloc","addr":"0x500","size":9,"site":"./prog:[0x11ce]"}
{"op":"end"}
`

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// ManyDoubleFrees is a trace with n double frees.
func ManyDoubleFrees(n int) string {
	var b strings.Builder
	b.WriteString(`{"format":"tlcheck-trace","version":1}` + "\n")
	b.WriteString(`{"op":"malloc","addr":"0x10","size":8}` + "\n")
	for range n + 1 {
		b.WriteString(`{"op":"free","addr":"0x10"}` + "\n")
	}
	b.WriteString(`{"op":"end"}` + "\n")
	return b.String()
}
