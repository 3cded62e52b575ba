package check

import (
	"maps"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/traces"
)

// A ruleIndex finds the first rule that suppresses a finding without
// trying every rule: a suppression file generated from a large baseline
// holds a million rules, and a trace reports thousands of findings, so a
// scan of the rules for each finding costs their product (279 s for
// 20,000 leaks under 1,000,000 rules).
//
// Each rule goes to one bucket, keyed by its kind (or *) and a text every
// site it matches must show:
//
//   - exact: a pattern without *, keyed by the whole pattern: a site
//     matches it only by being equal to it;
//   - prefix: a pattern whose text before its first * is not empty, keyed
//     by that text: a site it matches begins with it;
//   - suffix: a pattern that begins with a star and has text after its
//     last star, keyed by that text: a site it matches ends with it;
//   - infix: a pattern that begins and ends with * and has text between,
//     keyed by its longest run of text without *: a site it matches
//     holds it;
//   - any: the patterns of * alone, which match every site.
//
// A site is then looked up at each length some key has: in its prefixes,
// its suffixes and its substrings of that length, under its finding's
// kind and under *; only the rules of the buckets
// found are tried with glob, in file order, each bucket stopping at its
// first match or at a rule after the best match so far. The result is the
// one a scan of the rules gives: the first rule in file order that
// matches.
type ruleIndex struct {
	rules  []*Rule // what the index was built from, in file order
	exact  map[ruleKey][]int
	prefix map[ruleKey][]int
	suffix map[ruleKey][]int
	infix  map[ruleKey][]int
	any    []int
	// the lengths of the keys present, shortest first, so that a site
	// is looked up only at lengths some rule has
	prefixLens, suffixLens, infixLens []int
}

// ruleKey is a bucket's key: a kind ("*" for any) and a text.
type ruleKey struct {
	kind traces.Kind
	text string
}

func newRuleIndex(rules []*Rule) *ruleIndex {
	// Sized from a first pass: a million rules grow no map step by step.
	var n [4]int
	for _, r := range rules {
		n[bucketOf(r.Pattern)]++
	}
	x := &ruleIndex{rules: rules, exact: make(map[ruleKey][]int, n[0]), prefix: make(map[ruleKey][]int, n[1]),
		suffix: make(map[ruleKey][]int, n[2]), infix: make(map[ruleKey][]int, n[3])}
	plens, slens, ilens := map[int]bool{}, map[int]bool{}, map[int]bool{}
	for i, r := range rules {
		first := strings.IndexByte(r.Pattern, '*')
		last := strings.LastIndexByte(r.Pattern, '*')
		switch {
		case first < 0:
			k := ruleKey{r.Kind, r.Pattern}
			x.exact[k] = append(x.exact[k], i)
		case first > 0:
			k := ruleKey{r.Kind, r.Pattern[:first]}
			x.prefix[k] = append(x.prefix[k], i)
			plens[first] = true
		case last < len(r.Pattern)-1:
			k := ruleKey{r.Kind, r.Pattern[last+1:]}
			x.suffix[k] = append(x.suffix[k], i)
			slens[len(k.text)] = true
		case strings.Trim(r.Pattern, "*") != "":
			k := ruleKey{r.Kind, longestRun(r.Pattern)}
			x.infix[k] = append(x.infix[k], i)
			ilens[len(k.text)] = true
		default:
			x.any = append(x.any, i)
		}
	}
	x.prefixLens, x.suffixLens, x.infixLens = sortedKeys(plens), sortedKeys(slens), sortedKeys(ilens)
	return x
}

// bucketOf is the bucket a pattern goes to: 0 exact, 1 prefix, 2 suffix,
// 3 infix or any.
func bucketOf(pattern string) int {
	first, last := strings.IndexByte(pattern, '*'), strings.LastIndexByte(pattern, '*')
	switch {
	case first < 0:
		return 0
	case first > 0:
		return 1
	case last < len(pattern)-1:
		return 2
	}
	return 3
}

// longestRun is the longest text between the stars of a pattern (the
// first, of those as long).
func longestRun(pattern string) string {
	best := ""
	for run := range strings.SplitSeq(pattern, "*") {
		if len(run) > len(best) {
			best = run
		}
	}
	return best
}

func sortedKeys(m map[int]bool) []int { return slices.Sorted(maps.Keys(m)) }

// match returns the first rule in file order that suppresses v, or nil.
func (x *ruleIndex) match(v *traces.Violation) *Rule {
	if len(x.rules) == 0 {
		return nil
	}
	m := matcher{x: x, kind: v.Kind, best: len(x.rules)}
	hasSite := false
	for _, site := range siteList(v) {
		if site != "" {
			hasSite = true
			m.site(site)
		}
	}
	if !hasSite {
		m.site("") // no site at all: matched as the one site ""
	}
	if m.best == len(x.rules) {
		return nil
	}
	return x.rules[m.best]
}

// siteList is the sites of v's history: its own event's, then its
// related events'.
func siteList(v *traces.Violation) []string {
	out := make([]string, 0, 1+len(v.Related))
	out = append(out, v.Site)
	for _, r := range v.Related {
		out = append(out, r.Site)
	}
	return out
}

// matcher is one lookup: the best (lowest) rule index found so far, and
// how many rules glob tried (for the tests' bound on the work).
type matcher struct {
	x     *ruleIndex
	kind  traces.Kind
	best  int
	tried int
}

func (m *matcher) site(s string) {
	x := m.x
	for _, kind := range [2]traces.Kind{m.kind, "*"} {
		if len(x.exact) > 0 {
			m.bucket(x.exact[ruleKey{kind, s}], s)
		}
		for _, n := range x.prefixLens {
			if n > len(s) {
				break
			}
			m.bucket(x.prefix[ruleKey{kind, s[:n]}], s)
		}
		for _, n := range x.suffixLens {
			if n > len(s) {
				break
			}
			m.bucket(x.suffix[ruleKey{kind, s[len(s)-n:]}], s)
		}
		for _, n := range x.infixLens {
			for at := 0; at+n <= len(s); at++ {
				m.bucket(x.infix[ruleKey{kind, s[at : at+n]}], s)
			}
		}
	}
	for _, i := range x.any {
		if i >= m.best {
			break
		}
		if r := x.rules[i]; r.Kind == "*" || r.Kind == m.kind {
			m.tried++
			m.best = i // * matches every site
			break
		}
	}
}

// bucket tries a bucket's rules, in file order, up to the best so far.
func (m *matcher) bucket(rules []int, s string) {
	for _, i := range rules {
		if i >= m.best {
			return
		}
		m.tried++
		if glob(m.x.rules[i].Pattern, s) {
			m.best = i
			return
		}
	}
}
