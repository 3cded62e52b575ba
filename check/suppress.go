package check

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/traces"
)

// Suppressions, in the style of LeakSanitizer and Valgrind: a file of
// lines
//
//	# a comment
//	leak:vendor/*
//	*:gen_*.c:*
//
// each KIND:PATTERN, where KIND is a violation kind or * (any kind) and
// PATTERN a glob in which * matches any run of characters (/ and :
// included) and every other character only itself. A finding is
// suppressed when its kind matches and PATTERN matches the whole of one
// site of its history: the site of its own event or of any related event.
// A finding with no site at all is matched as if its one site were "", so
// that only * accepts it. The first rule in file order that matches names
// the suppression. Suppressed findings are never dropped: every report
// lists them, as suppressed, with the rule.

// Rule is one suppression line.
type Rule struct {
	Kind    traces.Kind // "*" for any kind
	Pattern string
	File    string // where the rule was written, for the report
	Line    int
}

// String is the rule as the report names it: "supp.txt:3 (leak:vendor/*)".
func (r *Rule) String() string {
	return fmt.Sprintf("%s:%d (%s:%s)", r.File, r.Line, r.Kind, r.Pattern)
}

// LoadSuppressions reads every suppression file, in order.
func LoadSuppressions(files []string) ([]*Rule, error) {
	var rules []*Rule
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err // *PathError: "open NAME: ..."
		}
		rs, err := ParseSuppressions(f, name)
		f.Close()
		if err != nil {
			return nil, err
		}
		rules = append(rules, rs...)
	}
	return rules, nil
}

// maxRuleLine bounds a suppression file's line, so that a file that is
// not one (a binary, a trace on one line) costs a bounded buffer.
const maxRuleLine = 1 << 20

// ParseSuppressions parses one suppression file; an error names the file
// and line, so that a typo never silently suppresses nothing.
func ParseSuppressions(r io.Reader, name string) ([]*Rule, error) {
	var rules []*Rule
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxRuleLine)
	n := 1
	for ; sc.Scan(); n++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		kind, pattern, ok := strings.Cut(text, ":")
		kind, pattern = strings.TrimSpace(kind), strings.TrimSpace(pattern)
		switch {
		case !ok:
			return nil, fmt.Errorf("%s:%d: %q: want KIND:PATTERN", name, n, safetext.Clip(text))
		case kind != "*" && !KnownKind(traces.Kind(kind)):
			return nil, fmt.Errorf("%s:%d: unknown kind %q (want * or one of %s)", name, n, safetext.Clip(kind), kindList())
		case pattern == "":
			return nil, fmt.Errorf("%s:%d: empty pattern after %q (use * to match every site)", name, n, kind+":")
		}
		rules = append(rules, &Rule{Kind: traces.Kind(kind), Pattern: pattern, File: name, Line: n})
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("%s:%d: a line longer than %d bytes: no site is that long", name, n, maxRuleLine)
	} else if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, n, err)
	}
	return rules, nil
}

// suppressedBy returns the first rule of p.Rules, in order, that
// suppresses v, or nil. It looks v up in an index of the rules, built on
// first use and again whenever Rules is another slice (suppress_index.go),
// so that a million rules cost a finding about what a few do. Rules must
// not be changed in place while the policy is in use.
func (p *Policy) suppressedBy(v *traces.Violation) *Rule {
	if len(p.Rules) == 0 {
		return nil
	}
	x := p.index.Load()
	if x == nil || len(x.rules) != len(p.Rules) || &x.rules[0] != &p.Rules[0] {
		x = newRuleIndex(p.Rules)
		p.index.Store(x)
	}
	return x.match(v)
}

// glob reports whether pattern matches all of s, where * in pattern
// matches any run of characters and everything else only itself. It runs
// in O(len(pattern)·len(s)) at worst: a pattern from a file never costs
// exponential time.
func glob(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0 // the last * seen in pattern, and where in s it began to match
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1 // let the last * take one more character
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
