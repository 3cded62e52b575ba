package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"a.c:1", "a.c:1", true},
		{"a.c:1", "a.c:12", false},
		{"a.c:*", "a.c:12", true},
		{"*", "", true},
		{"*", "anything/at:all", true},
		{"", "", true},
		{"", "x", false},
		{"vendor/*", "vendor/lib/x.c:3", true},
		{"vendor/*", "src/vendor/x.c:3", false},
		{"*vendor/*", "src/vendor/x.c:3", true},
		{"*.c:*", "x.c:3", true},
		{"*.c:*", "x.h:3", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"a*b", "ab", true},
		{"**", "x", true},
		{"?", "x", false}, // only * is special
		{"[x]", "[x]", true},
		{"./prog:[0x11ce]", "./prog:[0x11ce]", true},
		{strings.Repeat("*a", 30) + "b", strings.Repeat("a", 60), false}, // no exponential blow-up
	}
	for _, tt := range tests {
		if got := glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestParseSuppressions(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		rules []string // kind:pattern@line
		err   string   // a part of the error; "" for none
	}{
		{"empty", "", nil, ""},
		{"comments and blanks", "# header\n\n   \n  # indented\n", nil, ""},
		{"rules", "leak:vendor/*\n*:gen_*.c:*\n  double-free : a.c:3  \n", []string{"leak:vendor/*@1", "*:gen_*.c:*@2", "double-free:a.c:3@3"}, ""},
		{"no colon", "# x\nleak\n", nil, "supp.txt:2: \"leak\": want KIND:PATTERN"},
		{"unknown kind", "\n\nleek:a.c:*\n", nil, "supp.txt:3: unknown kind \"leek\""},
		{"empty pattern", "leak:\n", nil, "supp.txt:1: empty pattern"},
		{"empty kind", ":a.c\n", nil, "supp.txt:1: unknown kind \"\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, err := parseSuppressions(strings.NewReader(tt.text), "supp.txt")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rules {
				got = append(got, string(r.kind)+":"+r.pattern+"@"+strconv.Itoa(r.line))
			}
			if strings.Join(got, " ") != strings.Join(tt.rules, " ") {
				t.Errorf("rules %q, want %q", got, tt.rules)
			}
		})
	}
}

func TestSuppressedBy(t *testing.T) {
	v := &traces.Violation{Kind: traces.DoubleFree, Site: "src/a.c:9",
		Related: []traces.Related{{What: "freed", Site: "src/b.c:4"}, {What: "allocated", Site: "vendor/z.c:1"}}}
	noSites := &traces.Violation{Kind: traces.Leak}
	tests := []struct {
		rules string
		v     *traces.Violation
		line  int // the rule that suppresses; 0: none
	}{
		{"double-free:src/a.c:9", v, 1},
		{"double-free:src/a.c:*", v, 1},
		{"double-free:src/b.c:4", v, 1},          // a related event's site
		{"double-free:vendor/*", v, 1},           // the allocation's site
		{"*:vendor/*", v, 1},                     // any kind
		{"leak:vendor/*", v, 0},                  // wrong kind
		{"double-free:a.c:9", v, 0},              // whole-site match only
		{"double-free:src/c.c:*", v, 0},          // no site matches
		{"leak:x\n*:src/*\ndouble-free:*", v, 2}, // the first match wins
		{"leak:*", noSites, 1},                   // no site at all: only * matches
		{"leak:x*", noSites, 0},
	}
	for _, tt := range tests {
		rules, err := parseSuppressions(strings.NewReader(tt.rules), "s")
		if err != nil {
			t.Fatal(err)
		}
		r := suppressedBy(rules, tt.v)
		if got := 0; r != nil {
			got = r.line
			if got != tt.line {
				t.Errorf("%q on %+v: rule at line %d, want %d", tt.rules, tt.v, got, tt.line)
			}
		} else if tt.line != 0 {
			t.Errorf("%q on %+v: not suppressed, want the rule at line %d", tt.rules, tt.v, tt.line)
		}
	}
}

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
		"SUPPRESSED: leak at event 4 (line 6) by " + all + ":2 (leak:*.c:*)",
		"SUPPRESSED: leak at event 4 (line 6) by " + all + ":2 (leak:*.c:*)",
		"OK: no violations (2 suppressed)",
	})

	code, stdout, _ = replay("", "--suppressions", one, trace)
	if code != exitViolation {
		t.Errorf("one suppressed: exit %d, want 1", code)
	}
	assertLines(t, stdout, []string{
		"ERROR: leak at event 4 (line 6): addr 0x10, object #1",
		"SUPPRESSED: leak at event 4 (line 6) by " + one + ":1 (leak:util.c:*)",
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
