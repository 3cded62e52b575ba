package main

import (
	"encoding/json"
	"strings"
)

// What the HTML page shows is export's to test (export/html_test.go);
// the command's tests use these traces too (the page in Chromium, the
// profile's totals, a writer that fails).

// A site that is markup: the page must show it as text and run nothing.
const hostileSite = `<script>window.injected=1</script><img src=x onerror="window.injected=2">`

// hostileTrace leaks one block made at hostileSite and double-frees
// another: two findings.
var hostileTrace = `{"format":"tlcheck-trace","version":1,"source":"</title><script>window.injected=3</script>"}
{"op":"malloc","addr":"0x10","size":8,"site":` + jsonString(hostileSite) + `}
{"op":"malloc","addr":"0x20","size":16,"site":"ok.c:2"}
{"op":"free","addr":"0x20"}
{"op":"free","addr":"0x20","site":"ok.c:4"}
{"op":"dev_malloc","addr":"0x9000","size":4096}
{"op":"dev_free","addr":"0x9000"}
{"op":"end"}
`

func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// manyDoubleFrees is a trace with n double frees.
func manyDoubleFrees(n int) string {
	var b strings.Builder
	b.WriteString(`{"format":"tlcheck-trace","version":1}` + "\n")
	b.WriteString(`{"op":"malloc","addr":"0x10","size":8}` + "\n")
	for range n + 1 {
		b.WriteString(`{"op":"free","addr":"0x10"}` + "\n")
	}
	b.WriteString(`{"op":"end"}` + "\n")
	return b.String()
}
