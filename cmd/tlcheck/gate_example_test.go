package main

import (
	"fmt"
	"os"
	"strings"
)

// A team accepts today's findings once with --update, then gates every
// later run: the same leaks after unrelated edits pass, a second leak at
// a known site fails.
func Example_gate() {
	dir, _ := os.MkdirTemp("", "gate-example")
	defer os.RemoveAll(dir)
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir) // traces are named in the baseline as given: gate from a fixed folder

	// The report's first lines and verdicts (the histories are left out).
	tlcheck := func(args ...string) {
		var out, errOut strings.Builder
		code := run(&env{stdout: &out, stderr: &errOut}, args)
		for line := range strings.Lines(out.String() + errOut.String()) {
			for _, p := range []string{"ERROR", "OK", "SUMMARY", "GATE", "tlcheck"} {
				if strings.HasPrefix(line, p) {
					fmt.Print(line)
				}
			}
		}
		fmt.Println("exit", code)
	}
	os.WriteFile("t.jsonl", []byte(leakyV1), 0o644)
	tlcheck("gate", "--baseline", "b.json", "--update", "t.jsonl")

	os.WriteFile("t.jsonl", []byte(leakyV2), 0o644) // unrelated edits
	tlcheck("gate", "--baseline", "b.json", "t.jsonl")

	os.WriteFile("t.jsonl", []byte(leakyV3), 0o644) // one more leak at main.c:5
	tlcheck("gate", "--baseline", "b.json", "--tolerance", "20%", "t.jsonl")
	// Output:
	// ERROR: leak at event 2 (line 4): addr 0x10, object #1
	// ERROR: leak at event 2 (line 4): addr 0x100, object #2
	// SUMMARY: 2 new findings: 2 leak
	// GATE: UPDATE: 2 new findings, accepted into b.json
	// tlcheck gate: wrote b.json: 2 findings in 1 trace
	// exit 0
	// OK: no new findings (2 known)
	// GATE: PASS: nothing beyond b.json (2 known)
	// exit 0
	// ERROR: leak at event 3 (line 5): addr 0x400, object #3
	// SUMMARY: 1 new finding: 1 leak (2 known)
	// GATE: FAIL: 1 new finding against b.json (2 known)
	// exit 1
}
