package main

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/tlcheck/tlcheck/internal/chromium"
)

// TestExportHTMLInChromium loads exported pages in a real headless
// Chromium and reads what it shows: the verdict, the findings, the plots
// (drawn, with a size), a hostile site as text, no script run but the
// page's own and no request beyond the page itself. It skips where no Chromium is installed
// (.ci/run installs Debian's).
func TestExportHTMLInChromium(t *testing.T) {
	browser := chromium.Find()
	if browser == "" {
		t.Skip("no Chromium here (install Debian's chromium package to run this test)")
	}
	if testing.Short() {
		t.Skip("starts a browser; not with -short")
	}

	tests := []struct {
		name     string
		trace    string
		verdict  string
		findings int
		plots    int
		text     string // text the findings must show, "" for none
	}{
		{"clean", cleanDoc, "clean: no violation", 0, 1, ""},
		{"hostile sites", hostileTrace, "2 violations: 1 double-free, 1 leak", 2, 2, "<script>window.injected=1</script>"},
	}

	bctx, cancel, err := chromium.Start(browser, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()

	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".html")
			if code, _, stderr := exportCmd(tc.trace, "--format", "html", "--out", page, "-"); code == exitInput {
				t.Fatalf("export: %s", stderr)
			}
			pageURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(page)}).String()

			tab, cancelTab := chromedp.NewContext(bctx) // a tab of its own
			defer cancelTab()
			var mu sync.Mutex
			var requests []string
			err := chromedp.Listen(tab, func(ev any) {
				if r, ok := ev.(*network.EventRequestWillBeSent); ok {
					mu.Lock()
					requests = append(requests, r.Request.URL)
					mu.Unlock()
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(tab, 60*time.Second)
			defer cancel()
			if err := chromedp.Do(ctx, chromedp.Navigate(pageURL), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
				t.Fatalf("loading %s: %v", pageURL, err)
			}
			verdict := run1(t, ctx, chromedp.Text(chromedp.CSS("#verdict")))
			findings := run1(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("li.finding").length`))
			findingsText := run1(t, ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll("li.finding")).map(e => e.innerText).join("\n")`))
			plots := run1(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg.plot path.line").length`))
			plotWidth := run1(t, ctx, chromedp.Evaluate[float64](`(() => { const p = document.querySelector("svg.plot path.line"); return p ? p.getBoundingClientRect().width : 0; })()`))
			// The one script is the page's own, the memory view's, with its data.
			injected := run1(t, ctx, chromedp.Evaluate[bool](`window.injected !== undefined || document.querySelectorAll("script:not([type]), script[type]:not([type='application/json'])").length > 1`))

			if !strings.Contains(verdict, tc.verdict) {
				t.Errorf("the browser shows the verdict %q, want %q", verdict, tc.verdict)
			}
			if findings != tc.findings {
				t.Errorf("the browser shows %d findings, want %d", findings, tc.findings)
			}
			if tc.text != "" && !strings.Contains(findingsText, tc.text) {
				t.Errorf("the findings do not show %q as text:\n%s", tc.text, findingsText)
			}
			if plots != tc.plots || plotWidth < 100 {
				t.Errorf("%d plots shown, the first %v px wide; want %d, drawn", plots, plotWidth, tc.plots)
			}
			if injected {
				t.Error("markup from the trace ran, or the page has a script not its own")
			}
			mu.Lock()
			defer mu.Unlock()
			if len(requests) == 0 {
				t.Error("no request seen, not even the page's own: the listener hears nothing")
			}
			for _, r := range requests {
				if r != pageURL {
					t.Errorf("the page requested %s", r)
				}
			}
		})
	}
}

// run1 runs one action in the browser and returns its value.
func run1[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
