package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// TestReplaySuppressions runs replay with a suppression file: suppressed
// findings are listed as such (text and JSON), counted, and do not fail.
func TestReplaySuppressions(t *testing.T) {
	p := files(t, "leak.jsonl", twoLeaks, "all.txt", "# both\nleak:*.c:*\n", "one.txt", "leak:util.c:*\n",
		"bad.txt", "leak:a\nbogus line\n")
	trace, all, one, bad := p[0], p[1], p[2], p[3]

	code, stdout, stderr := replay("", "--suppressions", all, trace)
	if code != exitClean || stderr != "" {
		t.Errorf("all suppressed: exit %d, stderr %q; want 0", code, stderr)
	}
	assertLines(t, stdout, []string{
		// An end's leaks are all at one event, with no site: each line
		// says what leaked and where it was made.
		"SUPPRESSED: leak at event 4 (line 6): addr 0x10, object #1, allocated at event 0 (line 2, main.c:5) by " + all + ":2 (leak:*.c:*)",
		"SUPPRESSED: leak at event 4 (line 6): addr 0x100, object #2, allocated at event 1 (line 3, util.c:17) by " + all + ":2 (leak:*.c:*)",
		"OK: no violations (2 suppressed)",
	})

	code, stdout, _ = replay("", "--suppressions", one, trace)
	if code != exitViolation {
		t.Errorf("one suppressed: exit %d, want 1", code)
	}
	assertLines(t, stdout, []string{
		"ERROR: leak at event 4 (line 6): addr 0x10, object #1",
		"SUPPRESSED: leak at event 4 (line 6): addr 0x100, object #2, allocated at event 1 (line 3, util.c:17) by " + one + ":1 (leak:util.c:*)",
		"SUMMARY: 1 violation: 1 leak (1 suppressed)",
	})

	code, stdout, _ = replay("", "--json", "--suppressions", one, trace)
	var rep struct {
		Violations []traces.Violation
		Suppressed []struct {
			Kind         traces.Kind
			Event        int
			SuppressedBy string `json:"suppressed_by"`
			Rule         string
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if code != exitViolation || len(rep.Violations) != 1 || len(rep.Suppressed) != 1 ||
		rep.Suppressed[0].SuppressedBy != one+":1" || rep.Suppressed[0].Rule != "leak:util.c:*" ||
		rep.Suppressed[0].Kind != traces.Leak || rep.Suppressed[0].Event != 4 {
		t.Errorf("exit %d, JSON %+v", code, rep)
	}

	code, stdout, stderr = replay("", "--suppressions", bad, trace)
	if code != exitInput || stdout != "" || !strings.Contains(stderr, bad+":2:") {
		t.Errorf("bad file: exit %d, stdout %q, stderr %q; want 2 naming %s:2", code, stdout, stderr, bad)
	}
	code, _, stderr = replay("", "--suppressions", bad+".missing", trace)
	if code != exitInput || !strings.Contains(stderr, "missing") {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr)
	}
}

// twoLeaks leaks two blocks, made at main.c:5 and util.c:17.
const twoLeaks = `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x10","size":64,"site":"main.c:5"}
{"op":"malloc","addr":"0x100","size":300,"site":"util.c:17"}
{"op":"malloc","addr":"0x1000","size":8,"site":"main.c:6"}
{"op":"free","addr":"0x1000","site":"main.c:7"}
{"op":"end"}
`
