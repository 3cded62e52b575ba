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
	rules []*Rule // what the index was built from, in file order
	// head holds each bucket's first rule (its index plus 1), and next
	// each rule's successor in its bucket (-1 at the end), in file order:
	// one map and one array, so that a million rules cost no allocation
	// each.
	head map[ruleKey]int32
	next []int32
	any  []int32 // the rules of * alone
	// the lengths of the keys present, by bucket, shortest first, so that
	// a site is looked up only at lengths some rule has
	lens [bAny][]int
}

// The buckets.
const (
	bExact uint8 = iota
	bPrefix
	bSuffix
	bInfix
	bAny
)

// ruleKey is a bucket's key: which bucket, a kind ("*" for any) and a
// text.
type ruleKey struct {
	bucket uint8
	kind   traces.Kind
	text   string
}

func newRuleIndex(rules []*Rule) *ruleIndex {
	x := &ruleIndex{rules: rules, head: make(map[ruleKey]int32, len(rules)), next: make([]int32, len(rules))}
	var lens [bAny]map[int]bool
	for b := range lens {
		lens[b] = map[int]bool{}
	}
	// Backwards, each rule in front of its bucket: the lists end in file
	// order.
	for i := len(rules) - 1; i >= 0; i-- {
		r := rules[i]
		b, text := bucketOf(r.Pattern)
		if b == bAny {
			continue
		}
		k := ruleKey{b, r.Kind, text}
		x.next[i] = x.head[k] - 1
		x.head[k] = int32(i) + 1
		lens[b][len(text)] = true
	}
	for i, r := range rules {
		if b, _ := bucketOf(r.Pattern); b == bAny {
			x.any = append(x.any, int32(i))
		}
	}
	for b := range lens {
		x.lens[b] = slices.Sorted(maps.Keys(lens[b]))
	}
	return x
}

// bucketOf is the bucket a pattern goes to, and its key's text.
func bucketOf(pattern string) (uint8, string) {
	first, last := strings.IndexByte(pattern, '*'), strings.LastIndexByte(pattern, '*')
	switch {
	case first < 0:
		return bExact, pattern
	case first > 0:
		return bPrefix, pattern[:first]
	case last < len(pattern)-1:
		return bSuffix, pattern[last+1:]
	case strings.Trim(pattern, "*") != "":
		return bInfix, longestRun(pattern)
	}
	return bAny, ""
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
		m.bucket(ruleKey{bExact, kind, s}, s)
		for _, n := range x.lens[bPrefix] {
			if n > len(s) {
				break
			}
			m.bucket(ruleKey{bPrefix, kind, s[:n]}, s)
		}
		for _, n := range x.lens[bSuffix] {
			if n > len(s) {
				break
			}
			m.bucket(ruleKey{bSuffix, kind, s[len(s)-n:]}, s)
		}
		for _, n := range x.lens[bInfix] {
			for at := 0; at+n <= len(s); at++ {
				m.bucket(ruleKey{bInfix, kind, s[at : at+n]}, s)
			}
		}
	}
	for _, i := range x.any {
		if int(i) >= m.best {
			break
		}
		if r := x.rules[i]; r.Kind == "*" || r.Kind == m.kind {
			m.tried++
			m.best = int(i) // * matches every site
			break
		}
	}
}

// bucket tries the rules of bucket k, in file order, up to the best so
// far.
func (m *matcher) bucket(k ruleKey, s string) {
	for i := int(m.x.head[k]) - 1; i >= 0 && i < m.best; i = int(m.x.next[i]) {
		m.tried++
		if glob(m.x.rules[i].Pattern, s) {
			m.best = i
			return
		}
	}
}
