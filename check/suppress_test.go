package check

import (
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
			rules, err := ParseSuppressions(strings.NewReader(tt.text), "supp.txt")
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
				got = append(got, string(r.Kind)+":"+r.Pattern+"@"+strconv.Itoa(r.Line))
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
		rules, err := ParseSuppressions(strings.NewReader(tt.rules), "s")
		if err != nil {
			t.Fatal(err)
		}
		r := suppressedBy(rules, tt.v)
		if got := 0; r != nil {
			got = r.Line
			if got != tt.line {
				t.Errorf("%q on %+v: rule at line %d, want %d", tt.rules, tt.v, got, tt.line)
			}
		} else if tt.line != 0 {
			t.Errorf("%q on %+v: not suppressed, want the rule at line %d", tt.rules, tt.v, tt.line)
		}
	}
}
