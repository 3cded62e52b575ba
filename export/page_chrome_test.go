package export_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/tlcheck/tlcheck/export"
	"github.com/tlcheck/tlcheck/internal/chromium"
	"github.com/tlcheck/tlcheck/traces"
)

// The HTML page's memory view in a real headless Chromium, through the
// DevTools protocol: what it draws, what a hover and a click show, and
// that it runs nothing of the trace's and requests nothing. Screenshots go
// to $TLCHECK_PAGE_SHOTS where set (to look at), else to a temporary
// folder. It skips where no Chromium is installed (.ci/run installs
// Debian's) and with -short.

// browser starts one headless Chromium for a test and returns its
// context, or skips.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromium.Find()
	if path == "" {
		t.Skip("no Chromium here (install Debian's chromium package, or set TLCHECK_CHROMIUM, to run this test)")
	}
	if testing.Short() {
		t.Skip("starts a browser; not with -short")
	}
	bctx, cancel, err := chromium.Start(path, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	return bctx
}

// openPage writes the HTML export of trace to a file and opens it in a
// tab of its own; requests collects every URL the tab asks for.
func openPage(t *testing.T, bctx context.Context, name, trace string, extras *export.PageExtras) (ctx context.Context, requests func() []string, page string) {
	t.Helper()
	r, err := traces.NewReader(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := export.Write(&out, export.HTML, r, export.Options{Name: name, Page: extras}); err != nil {
		t.Fatal(err)
	}
	page = filepath.Join(t.TempDir(), name+".html")
	if err := os.WriteFile(page, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	pageURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(page)}).String()
	tab, cancelTab := chromedp.NewContext(bctx)
	t.Cleanup(cancelTab)
	var mu sync.Mutex
	var seen []string
	err = chromedp.Listen(tab, func(ev any) {
		if r, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			seen = append(seen, r.Request.URL)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(tab, 60*time.Second)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL), chromedp.WaitReady(chromedp.CSS(`body[data-mem-chosen]`))); err != nil {
		t.Fatalf("loading %s: %v", pageURL, err)
	}
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}, pageURL
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// mouse moves the pointer to (x, y), and clicks there where click.
func mouse(t *testing.T, ctx context.Context, x, y float64, click bool) {
	t.Helper()
	acts := []chromedp.Action[chromedp.Void]{chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y)}
	if click {
		acts = append(acts, chromedp.MouseClickXY(x, y))
	}
	if err := chromedp.Do(ctx, acts...); err != nil {
		t.Fatal(err)
	}
}

// screenshot saves the page whole as a PNG.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("TLCHECK_PAGE_SHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if len(png) < 1000 {
		t.Fatalf("a screenshot of %d bytes", len(png))
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// point is a place in the viewport, in CSS pixels.
type point struct{ X, Y float64 }

// inView defines inView(id) in the page: it scrolls the element into the
// viewport and returns its bounding box, so that a point computed from
// it is one the mouse can reach.
const inView = `window.inView = (id) => { const e = document.getElementById(id); e.scrollIntoView({block: "center"}); return e.getBoundingClientRect(); }`

func TestPageTimelineInChromium(t *testing.T) {
	bctx := browser(t)
	var trace bytes.Buffer
	if _, err := loopTrace(&trace, 6, 8, true); err != nil {
		t.Fatal(err)
	}
	ctx, requests, pageURL := openPage(t, bctx, "loop", trace.String(), nil)
	screenshot(t, ctx, "loop")
	eval[any](t, ctx, inView)

	// Drawn: bands by site, "other", the reserved envelope, the peak.
	bands := eval[int](t, ctx, `document.querySelectorAll("#mem-timeline path.band").length`)
	if bands != 13 {
		t.Errorf("%d bands drawn, want 12 sites and other", bands)
	}
	legend := eval[string](t, ctx, `document.getElementById("mem-legend").innerText`)
	for _, want := range []string{"optim/adamw.py:180", "other sites", "reserved (segments)"} {
		if !strings.Contains(legend, want) {
			t.Errorf("the legend does not name %q:\n%s", want, legend)
		}
	}
	if w := eval[float64](t, ctx, `document.getElementById("mem-envelope").getBBox().width`); w < 500 {
		t.Errorf("the reserved envelope is %v wide", w)
	}
	peak := eval[string](t, ctx, `document.querySelector("#mem-timeline .peaklabel").textContent`)
	if !strings.HasPrefix(peak, "peak ") || !strings.Contains(peak, " ms, event ") {
		t.Errorf("the peak's label is %q, want its bytes, time and event", peak)
	}
	// By events, the axis counts events; back by time, it counts time.
	for _, axis := range []struct{ button, label string }{{"events", "event"}, {"time", "time since the first event"}} {
		at := eval[point](t, ctx, `(() => { const b = [...document.querySelectorAll("#mem-axis button")].find((b) => b.textContent === "`+axis.button+`"); b.scrollIntoView({block: "center"}); const r = b.getBoundingClientRect(); return {X: r.left + r.width / 2, Y: r.top + r.height / 2}; })()`)
		mouse(t, ctx, at.X, at.Y, true)
		if got := eval[string](t, ctx, `document.querySelector("#mem-timeline .xlabel").textContent`); got != axis.label {
			t.Errorf("after %s, the x axis is %q, want %q", axis.button, got, axis.label)
		}
	}

	// A hover over the bottom band at the peak shows its site and blocks.
	at := eval[point](t, ctx, `(() => { const r = inView("mem-peak"); return {X: r.left + 1, Y: r.bottom - 4}; })()`)
	mouse(t, ctx, at.X, at.Y, false)
	hover := eval[string](t, ctx, `document.getElementById("mem-hover").innerText`)
	first := eval[string](t, ctx, `document.querySelector("#mem-legend .legitem code").textContent`)
	if !strings.Contains(hover, first) || !strings.Contains(hover, "blocks live") || !strings.Contains(hover, " by "+first) {
		t.Errorf("hovering the bottom band at the peak shows\n%s\nwant the site %s and its blocks", hover, first)
	}
	if tip := eval[string](t, ctx, `document.getElementById("mem-tip").innerText`); !strings.Contains(tip, "allocated") || !strings.Contains(tip, "reserved") {
		t.Errorf("the tooltip shows %q, want allocated and reserved named", tip)
	}
	screenshot(t, ctx, "loop-hover")

	// The top band at the peak is "other sites": its blocks are of sites
	// the legend does not name.
	at = eval[point](t, ctx, `(() => { inView("mem-peak"); const r = document.querySelector("#mem-timeline .peakdot").getBoundingClientRect(); return {X: r.left + r.width / 2, Y: r.bottom + 3}; })()`)
	mouse(t, ctx, at.X, at.Y, false)
	hover = eval[string](t, ctx, `document.getElementById("mem-hover").innerText`)
	named := eval[[]string](t, ctx, `[...document.querySelectorAll("#mem-legend .legitem")].map((e) => e.title).filter((s) => s && s !== "other sites")`)
	if !strings.HasPrefix(hover, "other sites") || !strings.Contains(hover, " by ") {
		t.Errorf("hovering the top of the peak (%v) shows\n%s\nwant other sites and their blocks; tip %q", at, hover, eval[string](t, ctx, `document.getElementById("mem-tip").innerText`))
	}
	for _, site := range named {
		if strings.Contains(hover, " by "+site+"\n") || strings.HasSuffix(hover, " by "+site) {
			t.Errorf("other sites' blocks include one of %s, a site of its own band:\n%s", site, hover)
		}
	}

	// A click early on chooses that moment: the state shows it.
	before := eval[string](t, ctx, `document.body.dataset.memChosen`)
	at = eval[point](t, ctx, `(() => { const r = inView("mem-timeline"); return {X: r.left + r.width * 0.2, Y: r.top + r.height * 0.5}; })()`)
	mouse(t, ctx, at.X, at.Y, true)
	after := eval[string](t, ctx, `document.body.dataset.memChosen`)
	state := eval[string](t, ctx, `document.getElementById("mem-state-title").innerText`)
	if after == before || !strings.Contains(state, "At event "+after) || !strings.Contains(state, "segment") {
		t.Errorf("a click at 20%% chose event %s (before %s); the state says %q", after, before, state)
	}
	// The right arrow steps to the next moment that shows another event.
	was := eval[int](t, ctx, `+document.body.dataset.memChosen`)
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight)); err != nil {
		t.Fatal(err)
	}
	if next := eval[int](t, ctx, `+document.body.dataset.memChosen`); next <= was {
		t.Errorf("the right arrow chose event %d after %d", next, was)
	}
	if state := eval[string](t, ctx, `document.getElementById("mem-state-title").innerText`); !strings.Contains(state, "At event ") || strings.Contains(state, fmt.Sprintf("At event %d:", was)) {
		t.Errorf("after the right arrow the state says %q", state)
	}
	if h := eval[float64](t, ctx, `document.getElementById("mem-state").getBoundingClientRect().height`); h < 20 {
		t.Errorf("the allocator state is %v px high", h)
	}
	// A hover on the first segment's first block shows its stack.
	at = eval[point](t, ctx, `(() => { const r = inView("mem-state"); return {X: r.left + 202, Y: r.top + 12}; })()`)
	mouse(t, ctx, at.X, at.Y, true)
	stack := eval[string](t, ctx, `(document.getElementById("mem-stack") || {}).textContent || ""`)
	if stack != "model.py:20" {
		t.Errorf("the first block's stack shows %q, want model.py:20 (the first parameter)", stack)
	}
	screenshot(t, ctx, "loop-state")

	// A drag across the second step draws it again, from the lives: the
	// axis starts within it, the bands reach its own highest, and "whole
	// trace" goes back.
	ticks := func() string {
		return eval[string](t, ctx, `[...document.querySelectorAll("#mem-timeline .xtick")].map((e) => e.textContent).join(" ")`)
	}
	whole := ticks()
	from := eval[point](t, ctx, `(() => { const r = inView("mem-timeline"); return {X: r.left + r.width * 0.3, Y: r.top + r.height * 0.5}; })()`)
	to := eval[point](t, ctx, `(() => { const r = document.getElementById("mem-timeline").getBoundingClientRect(); return {X: r.left + r.width * 0.45, Y: r.top + r.height * 0.5}; })()`)
	if err := chromedp.Do(ctx,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, from.X, from.Y),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, from.X, from.Y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, to.X, to.Y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, to.X, to.Y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
	); err != nil {
		t.Fatal(err)
	}
	zoom := eval[string](t, ctx, `document.body.dataset.memZoom || ""`)
	if zoom == "" || ticks() == whole || eval[bool](t, ctx, `document.getElementById("mem-unzoom").hidden`) {
		t.Fatalf("a drag did not zoom: span %q, ticks %q (whole %q)", zoom, ticks(), whole)
	}
	// Within the span, the highest stack is a step's forward peak: above
	// the optimizer's state alone and at most the trace's peak.
	high := eval[float64](t, ctx, `Math.min(...[...document.querySelectorAll("#mem-timeline path.band")].map((p) => p.getBBox().y))`)
	peakY := eval[float64](t, ctx, `document.querySelector("#mem-timeline .grid") && (() => { const D = JSON.parse(document.getElementById("mem-data").textContent); return 22 + 288 - D.peak.bytes / (Math.max(D.peak.bytes, D.peak.reserved) * 1.06) * 288; })()`)
	if high < peakY-0.5 || high > 22+288*0.6 {
		t.Errorf("the zoomed bands reach y %.1f; the trace's peak is at y %.1f", high, peakY)
	}
	screenshot(t, ctx, "loop-zoom")
	at = eval[point](t, ctx, `(() => { const b = document.getElementById("mem-unzoom"); b.scrollIntoView({block: "center"}); const r = b.getBoundingClientRect(); return {X: r.left + r.width / 2, Y: r.top + r.height / 2}; })()`)
	mouse(t, ctx, at.X, at.Y, true)
	if got := ticks(); got != whole || eval[string](t, ctx, `document.body.dataset.memZoom || ""`) != "" {
		t.Errorf("after whole trace the ticks are %q, want %q", got, whole)
	}

	for _, r := range requests() {
		if r != pageURL {
			t.Errorf("the page requested %s", r)
		}
	}
}

func TestPageMarksInChromium(t *testing.T) {
	bctx := browser(t)
	const hostile = `<script>window.injected=1</script><img src=x onerror="window.injected=2">`
	trace := `{"format":"tlcheck-trace","version":1}
{"op":"dev_malloc","addr":"0x9000","size":4096,"t":1000}
{"op":"pool_get","addr":"0x9000","size":1024,"site":"` + strings.ReplaceAll(hostile, `"`, `\"`) + `","t":2000}
{"op":"pool_get","addr":"0x9400","size":512,"site":"train.py:7","t":3000}
{"op":"pool_put","addr":"0x9400","t":4000}
{"op":"pool_put","addr":"0x9400","site":"train.py:9","t":5000}
{"op":"pool_get","addr":"0x9800","size":2048,"site":"train.py:8","t":6000}
`
	extras := &export.PageExtras{
		Suspects: []export.PageSuspect{{Site: "loss.py:3059", Stack: []string{"loss.py:3059", "train.py:40"}, BytesPerIteration: 512, BlocksPerIteration: 1, Iterations: 12, Confidence: "12 iterations, steady", Events: []int{2}}},
		OOM: &export.PageOOM{Event: 5, Request: 1 << 30, Capacity: 140 << 30, Allocated: 3072, Reserved: 4096,
			WhatIf: []export.PageWhatIf{{Setting: "expandable_segments:True", PeakReserved: 4096, Fits: true}}},
	}
	ctx, requests, pageURL := openPage(t, bctx, "marks", trace, extras)
	screenshot(t, ctx, "marks")

	if n := eval[int](t, ctx, `document.querySelectorAll("#mem-timeline .mark.finding").length`); n != 1 {
		t.Errorf("%d findings marked, want the double free", n)
	}
	if title := eval[string](t, ctx, `document.querySelector("#mem-timeline .mark.finding title").textContent`); !strings.HasPrefix(title, "double-free at event 4") {
		t.Errorf("the finding's mark says %q", title)
	}
	// A click on the finding in the list chooses its event.
	at := eval[point](t, ctx, `(() => { const li = document.querySelector("li.finding"); li.scrollIntoView({block: "center"}); const r = li.getBoundingClientRect(); return {X: r.left + 20, Y: r.top + 8}; })()`)
	mouse(t, ctx, at.X, at.Y, true)
	if e := eval[string](t, ctx, `document.body.dataset.memChosen`); e != "4" {
		t.Errorf("a click on the double free in the list chose event %s, want 4", e)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#mem-timeline .mark.suspect").length`); n != 1 {
		t.Errorf("%d suspect marks, want 1", n)
	}
	sus := eval[string](t, ctx, `document.getElementById("mem-suspects").hidden ? "" : document.getElementById("mem-suspects").innerText`)
	if !strings.Contains(sus, "loss.py:3059") || !strings.Contains(sus, "12 iterations, steady") {
		t.Errorf("the suspects show %q", sus)
	}
	oom := eval[string](t, ctx, `document.getElementById("mem-oom").hidden ? "" : document.getElementById("mem-oom").innerText`)
	if !strings.Contains(oom, "1.00 GiB failed") || !strings.Contains(oom, "expandable_segments:True") || !strings.Contains(oom, "fits") {
		t.Errorf("the OOM explanation shows %q", oom)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#mem-timeline .oomline").length`); n != 1 {
		t.Errorf("%d OOM lines, want 1", n)
	}
	legend := eval[string](t, ctx, `[...document.querySelectorAll("#mem-legend .legitem")].map((e) => e.title + " | " + e.innerText).join("\n")`)
	if !strings.Contains(legend, hostile) || !strings.Contains(legend, "…/script><img src=x") {
		t.Errorf("the hostile site is not shown as text in the legend (in full as its title, its end as its name):\n%s", legend)
	}
	if eval[bool](t, ctx, `window.injected !== undefined`) {
		t.Error("markup from the trace ran")
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("script:not([type])").length`); n != 1 {
		t.Errorf("%d scripts, want the page's own", n)
	}
	for _, r := range requests() {
		if r != pageURL {
			t.Errorf("the page requested %s", r)
		}
	}
}

func TestPageHeapInChromium(t *testing.T) {
	bctx := browser(t)
	trace := `{"format":"tlcheck-trace","version":1}
{"op":"malloc","addr":"0x100","size":100,"site":"a.c:1"}
{"op":"malloc","addr":"0x200","size":300,"site":"b.c:2"}
{"op":"free","addr":"0x100"}
{"op":"malloc","addr":"0x300","size":50,"site":"a.c:1"}
{"op":"end"}
`
	ctx, _, _ := openPage(t, bctx, "heap", trace, nil)
	screenshot(t, ctx, "heap")
	if got := eval[string](t, ctx, `document.getElementById("mem-sub").textContent`); !strings.HasPrefix(got, "The live bytes of the heap, stacked by allocation site.") {
		t.Errorf("the view says %q, want the heap named", got)
	}
	if x := eval[string](t, ctx, `document.querySelector("#mem-timeline .xlabel").textContent`); x != "event" {
		t.Errorf("the x axis is %q, want events (the trace has no times)", x)
	}
	peak := eval[string](t, ctx, `document.querySelector("#mem-timeline .peaklabel").textContent`)
	if peak != "peak 400 B at event 1" || eval[int](t, ctx, `document.querySelectorAll("#mem-axis button:not([hidden])").length`) != 0 {
		t.Errorf("the peak says %q", peak)
	}
	blocks := eval[string](t, ctx, `document.getElementById("mem-block").innerText`)
	if !strings.Contains(blocks, "2 live") || !strings.Contains(blocks, "b.c:2") {
		t.Errorf("the state at the peak shows %q, want its two blocks", blocks)
	}
}

// TestPageCorpusInChromium opens the page of every trace of the corpus
// (each kind of violation, each layer) and fails on any exception the
// page's script throws, or a page whose memory view never finishes.
func TestPageCorpusInChromium(t *testing.T) {
	bctx := browser(t)
	files, err := filepath.Glob(filepath.Join("..", "traces", "testdata", "corpus", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	tab, cancel := chromedp.NewContext(bctx)
	defer cancel()
	var mu sync.Mutex
	var thrown []string
	if err := chromedp.Listen(tab, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			mu.Lock()
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			thrown = append(thrown, fmt.Sprintf("%s (line %d)", msg, d.LineNumber+1))
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		trace, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := traces.NewReader(bytes.NewReader(trace))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if _, err := export.Write(&out, export.HTML, r, export.Options{Name: name}); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		page := filepath.Join(dir, name+".html")
		if err := os.WriteFile(page, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancelT := context.WithTimeout(tab, 30*time.Second)
		wait := `body`
		if bytes.Contains(out.Bytes(), []byte(`id="memory"`)) {
			wait = `body[data-mem-chosen]`
		}
		if err := chromedp.Do(ctx, chromedp.Navigate((&url.URL{Scheme: "file", Path: filepath.ToSlash(page)}).String()), chromedp.WaitReady(chromedp.CSS(wait))); err != nil {
			t.Errorf("%s: the page never got ready (%s): %v", name, wait, err)
		}
		cancelT()
		mu.Lock()
		if len(thrown) > 0 {
			t.Errorf("%s: the page threw %s", name, strings.Join(thrown, "; "))
			thrown = nil
		}
		mu.Unlock()
	}
}
