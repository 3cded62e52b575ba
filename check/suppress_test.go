package check

import (
	"fmt"
	"math/rand/v2"
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
		{"a line too long", "leak:a\n\nleak:" + strings.Repeat("x", 10<<20) + "\n", nil, "supp.txt:3: a line longer than 1048576 bytes"},
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
		r := (&Policy{Rules: rules}).suppressedBy(tt.v)
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

// scanRules is the suppression rules' meaning stated as a scan: the
// first rule that suppresses v, or nil. The index must agree with it.
func scanRules(rules []*Rule, v *traces.Violation) *Rule {
	for _, r := range rules {
		if r.Kind != "*" && r.Kind != v.Kind {
			continue
		}
		try := func(site string) bool { return site != "" && glob(r.Pattern, site) }
		hasSite := v.Site != ""
		if try(v.Site) {
			return r
		}
		for _, rel := range v.Related {
			if try(rel.Site) {
				return r
			}
			hasSite = hasSite || rel.Site != ""
		}
		if !hasSite && glob(r.Pattern, "") {
			return r
		}
	}
	return nil
}

// TestRuleIndexAgreesWithScan generates rule files and findings from the
// few texts sites are made of, so that rules of every bucket (exact,
// prefix, suffix, the rest) match, overlap and shadow one another, and
// checks that the index picks the rule a scan in file order picks.
func TestRuleIndexAgreesWithScan(t *testing.T) {
	parts := []string{"a", "b", "a.c", ":1", "/", ""}
	kinds := []traces.Kind{"*", traces.Leak, traces.DoubleFree}
	r := rand.New(rand.NewPCG(1, 2))
	text := func(stars bool) string {
		var b strings.Builder
		for range r.IntN(4) {
			if stars && r.IntN(3) == 0 {
				b.WriteString("*")
			}
			b.WriteString(parts[r.IntN(len(parts))])
		}
		if stars && r.IntN(3) == 0 {
			b.WriteString("*")
		}
		return b.String()
	}
	for round := range 2000 {
		var rules []*Rule
		for i := range 1 + r.IntN(8) {
			p := text(true)
			if p == "" {
				p = "*"
			}
			rules = append(rules, &Rule{Kind: kinds[r.IntN(len(kinds))], Pattern: p, File: "s", Line: i + 1})
		}
		v := &traces.Violation{Kind: kinds[1+r.IntN(2)], Site: text(false)}
		for range r.IntN(3) {
			v.Related = append(v.Related, traces.Related{Site: text(false)})
		}
		want := scanRules(rules, v)
		if got := (&Policy{Rules: rules}).suppressedBy(v); got != want {
			t.Fatalf("round %d: rules %v, finding %+v: index gives %v, the scan %v", round, rules, v, got, want)
		}
	}
}

// TestRuleIndexWork bounds the rules tried for a finding under a large
// file: a scan tries every rule, the index only those of the buckets the
// finding's sites select. It also checks that a policy whose Rules are
// replaced is indexed again.
func TestRuleIndexWork(t *testing.T) {
	const n = 100_000
	var rules []*Rule
	for i := range n {
		pats := []string{"src/f%d.c:*", "src/g%d.c:12", "*/h%d.c:3", "*@%d@*"}
		rules = append(rules, &Rule{Kind: traces.Leak, Pattern: fmt.Sprintf(pats[i%len(pats)], i), File: "s", Line: i + 1})
	}
	x := newRuleIndex(rules)
	for _, tt := range []struct {
		site string
		line int
	}{
		{"src/f40.c:7", 41},
		{"src/g99997.c:12", 99998},
		{"lib/h2.c:3", 3},
		{"x@7@x", 8},
		{"nowhere.c:1", 0},
	} {
		m := matcher{x: x, kind: traces.Leak, best: len(rules)}
		m.site(tt.site)
		got := 0
		if m.best < len(rules) {
			got = rules[m.best].Line
		}
		if got != tt.line || m.tried > 64 {
			t.Errorf("%s: rule at line %d after trying %d rules; want line %d after at most 64", tt.site, got, m.tried, tt.line)
		}
	}
	p := &Policy{Rules: rules[:1]}
	v := &traces.Violation{Kind: traces.Leak, Site: "src/g1.c:12"}
	if p.suppressedBy(v) != nil {
		t.Fatal("rule 1 suppresses src/g1.c:12")
	}
	p.Rules = rules[:2]
	if got := p.suppressedBy(v); got != rules[1] {
		t.Errorf("after Rules grew: %v, want %v (a stale index)", got, rules[1])
	}
}
