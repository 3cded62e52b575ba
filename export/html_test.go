package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/internal/tracetest"
	"github.com/tlcheck/tlcheck/traces"
)

// The HTML page's tests: what it shows of a trace, against the model's
// verdict, within the bound on findings it lists (maxHTMLFindings), and
// that it runs and loads nothing.

// htmlOf writes src as the HTML page.
func htmlOf(t *testing.T, src traces.Source, opts Options) string {
	t.Helper()
	var out bytes.Buffer
	if _, err := Write(&out, HTML, src, opts); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestExportHTML(t *testing.T) {
	tests := []struct {
		name     string
		trace    string
		verdict  string // a part of the verdict
		findings int    // findings shown
		hidden   string // the note on findings not shown, "" for none
		plots    []string
	}{
		{"clean", cleanDoc, "clean: no violation", 0, "", []string{"heap"}},
		{"stale reuse, incomplete", staleReuse, "1 violation: 1 stale-reuse (incomplete", 1, "", []string{"heap"}},
		{"markup in sites", hostileTrace, "2 violations: 1 double-free, 1 leak", 2, "", []string{"heap", "device"}},
		{"findings beyond the bound", manyDoubleFrees(maxHTMLFindings + 5), fmt.Sprintf("%d violations: %d double-free", maxHTMLFindings+5, maxHTMLFindings+5),
			maxHTMLFindings, "and 5 more findings", []string{"heap"}},
	}
	finding := regexp.MustCompile(`<li class="finding"`)
	plot := regexp.MustCompile(`<figure class="space" data-space="(\w+)">`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := htmlOf(t, mustSource(t, tc.trace), Options{Name: "test"})
			if !strings.Contains(page, `<p id="verdict"`) {
				t.Fatalf("no page:\n%s", page)
			}
			if v := between(page, `<p id="verdict"`, "</p>"); !strings.Contains(v, tc.verdict) {
				t.Errorf("verdict %q, want it to hold %q", v, tc.verdict)
			}
			if n := len(finding.FindAllString(page, -1)); n != tc.findings {
				t.Errorf("%d findings shown, want %d", n, tc.findings)
			}
			if tc.hidden != "" && !strings.Contains(page, tc.hidden) {
				t.Errorf("the page does not say %q", tc.hidden)
			}
			var spaces []string
			for _, m := range plot.FindAllStringSubmatch(page, -1) {
				spaces = append(spaces, m[1])
			}
			if fmt.Sprint(spaces) != fmt.Sprint(tc.plots) {
				t.Errorf("plots of %v, want %v", spaces, tc.plots)
			}
			checkSelfContained(t, page)
		})
	}
}

// checkSelfContained fails on anything in page that runs or loads: a tag
// other than the page's own, an event handler, a source or link, a URL.
// Text is escaped, so a "<" in it is "&lt;" and starts no tag. The one
// script that may run is the memory view's, which the page's
// Content-Security-Policy names by its hash, beside a policy that forbids
// every request; its data is a JSON script, which no browser runs.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	page = checkScript(t, page)
	allowed := map[string]bool{"html": true, "head": true, "meta": true, "title": true, "style": true,
		"body": true, "h1": true, "h2": true, "p": true, "span": true, "table": true, "tr": true, "td": true,
		"figure": true, "figcaption": true, "svg": true, "path": true, "div": true, "ol": true, "ul": true,
		"li": true, "code": true, "th": true,
		"section": true, "h3": true, "canvas": true, "noscript": true} // the memory view's
	tag := regexp.MustCompile(`<(/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>`)
	attr := regexp.MustCompile(`(?i)\s(on\w+|src|href|xlink:href|action|srcset)\s*=`)
	for _, m := range tag.FindAllStringSubmatch(page, -1) {
		if !allowed[strings.ToLower(m[2])] {
			t.Errorf("the page has a <%s> tag: %s", m[2], m[0])
		}
		if a := attr.FindString(m[3]); a != "" {
			t.Errorf("the page has an attribute %q: %s", a, m[0])
		}
	}
	for _, bad := range []string{"http://", "https://", "url(", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q: %s", bad, around(page, bad))
		}
	}
}

// checkScript checks the page's policy and its scripts: at most one
// script that runs, whose hash is the one the policy allows, and a JSON
// script of data. It returns the page without them.
func checkScript(t *testing.T, page string) string {
	t.Helper()
	const policy = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-`
	if !strings.Contains(page, policy) {
		t.Errorf("the page has no policy forbidding requests and foreign scripts")
		return page
	}
	hash := html.UnescapeString(between(page, policy, "'"))
	scripts := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(page, -1)
	if len(scripts) > 1 {
		t.Errorf("%d scripts that run, want at most the memory view's", len(scripts))
	}
	for _, m := range scripts {
		sum := sha256.Sum256([]byte(m[1]))
		if got := base64.StdEncoding.EncodeToString(sum[:]); got != hash {
			t.Errorf("a script whose hash %s is not the policy's %s", got, hash)
		}
		page = strings.Replace(page, m[0], "", 1)
	}
	data := regexp.MustCompile(`(?s)<script type="application/json" id="mem-(?:data|lives)">(.*?)</script>`).FindAllStringSubmatch(page, -1)
	if 2*len(scripts) != len(data) {
		t.Errorf("%d scripts and %d data, want one script and its two data or none", len(scripts), len(data))
	}
	for _, m := range data {
		if !json.Valid([]byte(m[1])) || strings.ContainsAny(m[1], "<>") {
			t.Errorf("the memory view's data is not JSON with '<' and '>' escaped: %.200s", m[1])
		}
		page = strings.Replace(page, m[0], "", 1)
	}
	return page
}

func between(s, from, to string) string {
	_, s, _ = strings.Cut(s, from)
	s, _, _ = strings.Cut(s, to)
	return s
}

func around(s, sub string) string {
	i := strings.Index(s, sub)
	return s[max(i-60, 0):min(i+60, len(s))]
}

// TestExportHTMLPage holds the page to what a reader needs beyond the
// findings: labels on the plots' y axis, the leaks summed by allocation
// site as the text report sums them, and for a snapshot the reason no leak
// check ran that the text report gives.
func TestExportHTMLPage(t *testing.T) {
	page := htmlOf(t, mustSource(t, sitesTrace), Options{Name: "sites"})
	// Live bytes peak at 600 (sitesTrace): the axis says so, and half.
	if y := between(page, `<div class="yaxis"`, "</div>"); !strings.Contains(y, "<span>600 B</span><span>300 B</span><span>0</span>") {
		t.Errorf("y axis %q, want labels 600 B, 300 B and 0", y)
	}
	sites := between(page, `<table class="sites" id="leaksites">`, "</table>")
	for _, want := range []string{"<td class=\"n\">300</td><td class=\"n\">1</td><td><code>a.c:1</code>",
		"<code>c.c:3</code>", "<code>./prog:[0x11ce]</code>"} {
		if !strings.Contains(sites, want) {
			t.Errorf("leaks by site lacks %q:\n%s", want, sites)
		}
	}
	if i, j := strings.Index(sites, "a.c:1"), strings.Index(sites, "./prog"); i < 0 || j < i {
		t.Errorf("sites not biggest first:\n%s", sites)
	}
	in, err := input.Open("../traces/torchsnap/testdata/real-cuda.pickle", input.Options{Format: input.TorchSnapshot})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	page = htmlOf(t, in, Options{Name: "real-cuda.pickle", Snapshot: true})
	v := between(page, `<p id="verdict"`, "</p>")
	if !strings.Contains(v, "a memory snapshot is taken mid-run") || strings.Contains(v, "without an end event") {
		t.Errorf("a snapshot's verdict %q; want the text report's reason", v)
	}
}

const hostileSite = tracetest.HostileSite

var hostileTrace = tracetest.HostileTrace

var manyDoubleFrees = tracetest.ManyDoubleFrees

const sitesTrace = tracetest.SitesTrace
