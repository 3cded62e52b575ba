package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/internal/chromium"
	"github.com/tlcheck/tlcheck/traces/torchsnap"
)

// The page report: how big the HTML export of a snapshot is and how fast
// Chromium opens it, by the snapshot's entries. The target (issue 26): a
// 1-million-entry snapshot opens in under 2 s and the page stays under
// 50 MB.

// defaultPageSizes are the entries of the snapshots the page report makes.
const defaultPageSizes = "10000,100000,300000,1000000"

// pageRow is one snapshot's figures.
type pageRow struct {
	Entries    int
	Snapshot   int64 // bytes
	Export     time.Duration
	Page       int64   // bytes
	ReadyMs    float64 // median: navigation start to the timeline drawn
	StateMs    float64 // median: navigation start to the allocator state drawn (the lives decoded)
	CPUMs      float64 // median: Chromium's CPU time (all its processes) from navigation to the state drawn
	Load       float64 // the load average (1 min) when the page was opened
	Blocks     int
	ReadyRuns  []float64
	BrowserVer string
}

// writePageReport makes a snapshot of each size, exports it as HTML with
// tlcheck, opens the page runs times in a headless Chromium and writes
// the figures to out, and a figure of them to svgOut.
func writePageReport(out, svgOut, sizes string, runs int) error {
	work, err := os.MkdirTemp("", "tlcheck-page-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	tlcheck := filepath.Join(work, "tlcheck")
	step("building tlcheck")
	if err := command("go", "build", "-o", tlcheck, "./cmd/tlcheck").Run(); err != nil {
		return fmt.Errorf("building tlcheck: %w", err)
	}
	profile := filepath.Join(work, "profile")
	browser := chromium.Find()
	if browser == "" {
		return fmt.Errorf("the page report needs Chromium (Debian's chromium package, or TLCHECK_CHROMIUM)")
	}
	bctx, cancel, err := chromium.Start(browser, profile)
	if err != nil {
		return err
	}
	defer cancel()
	version, _ := exec.Command(browser, "--version").Output()

	var rows []pageRow
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("-page-sizes: %q is not a number of entries", s)
		}
		snap := filepath.Join(work, fmt.Sprintf("loop-%d.pickle", n))
		step("making a snapshot of %d entries", n)
		if err := writeLoopSnapshot(snap, n); err != nil {
			return err
		}
		row := pageRow{Entries: n, BrowserVer: strings.TrimSpace(string(version))}
		fi, err := os.Stat(snap)
		if err != nil {
			return err
		}
		row.Snapshot = fi.Size()
		page := filepath.Join(work, fmt.Sprintf("loop-%d.html", n))
		step("exporting it as HTML")
		start := time.Now()
		cmd := command(tlcheck, "export", "--format", "html", "--out", page, snap)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("tlcheck export: %w", err)
		}
		row.Export = time.Since(start)
		if fi, err = os.Stat(page); err != nil {
			return err
		}
		row.Page = fi.Size()
		var states, cpus []float64
		for r := range runs {
			step("opening it in Chromium (%d of %d)", r+1, runs)
			cpu0 := chromiumCPU(profile)
			ready, state, blocks, err := openTimed(bctx, page, func() { cpus = append(cpus, float64(chromiumCPU(profile)-cpu0)/float64(time.Millisecond)) })
			if err != nil {
				return err
			}
			row.ReadyRuns = append(row.ReadyRuns, ready)
			states = append(states, state)
			row.Blocks = blocks
		}
		row.ReadyMs, row.StateMs, row.CPUMs, row.Load = median(row.ReadyRuns), median(states), median(cpus), loadAverage1()
		rows = append(rows, row)
		os.Remove(snap)
		os.Remove(page)
	}
	step("writing %s and %s", out, svgOut)
	if err := atomicfile.Replace(svgOut, pageFigure(rows)); err != nil {
		return err
	}
	return atomicfile.Replace(out, renderPage(rows, runs, filepath.Base(svgOut)))
}

// openTimed opens page in a fresh tab and returns, in ms from the start of
// navigation, when the timeline was drawn and when the allocator state
// was (page.js: tlcheckPage.readyMs and stateMs), and the blocks the
// page decoded. It calls done once the state is drawn, before the tab
// closes.
func openTimed(bctx context.Context, page string, done func()) (ready, state float64, blocks int, err error) {
	tab, cancel := chromedp.NewContext(bctx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(tab, 2*time.Minute)
	defer cancelT()
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(page)}).String()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS(`body[data-mem-chosen]`))); err != nil {
		return 0, 0, 0, fmt.Errorf("opening %s: %w", page, err)
	}
	done()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[tlcheckPage.readyMs, tlcheckPage.stateMs, tlcheckPage.decode().blocks.n]`))
	if err != nil || len(v) != 3 {
		return 0, 0, 0, fmt.Errorf("reading the page's timings: %v", err)
	}
	return v[0], v[1], int(v[2]), nil
}

// writeLoopSnapshot writes a snapshot of n entries of a training loop:
// parameters made once; per step each layer's activations (and a
// temporary freed at once), the loss, the gradients as the activations
// are freed, the optimizer's state at the first step, the gradients
// freed. Blocks are placed first-fit in 64 MiB segments, reserved as
// needed and kept, as PyTorch's caching allocator keeps them. Each entry
// has one frame ("file:line"), times 20-40 µs apart.
func writeLoopSnapshot(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := torchsnap.NewWriter(f)
	g := &snapGPU{w: w, n: n, t: 1_700_000_000_000_000, blocks: map[uint64]blockAt{}}
	const layers = 24
	for l := 0; l < layers && !g.full(); l++ {
		g.get(uint64(2<<20+l*64<<10), fmt.Sprintf("model.py:%d", 20+l))
	}
	for s := 0; !g.full(); s++ {
		var acts, grads []uint64
		for l := 0; l < layers && !g.full(); l++ {
			acts = append(acts, g.get(uint64(3<<20+(l%3)<<20), fmt.Sprintf("layers.py:%d", 100+l%6*10)))
			tmp := g.get(256<<10, "functional.py:2153")
			g.put(tmp)
		}
		loss := g.get(512, "loss.py:3059")
		for l := len(acts) - 1; l >= 0 && !g.full(); l-- {
			grads = append(grads, g.get(uint64(2<<20+l*64<<10), "autograd/graph.py:825"))
			g.put(acts[l])
		}
		if s == 0 {
			for l := 0; l < layers && !g.full(); l++ {
				g.get(uint64(4<<20+l*128<<10), "optim/adamw.py:180")
			}
		}
		for _, b := range grads {
			g.put(b)
		}
		g.put(loss)
		g.t += 3000
	}
	if g.err != nil {
		return g.err
	}
	var segs []torchsnap.Segment
	for _, s := range g.segs {
		seg := torchsnap.Segment{Addr: s.addr, Size: s.size, Site: "CUDACachingAllocator.cpp:1120"}
		for a, b := range g.blocks {
			if a >= s.addr && a < s.addr+s.size {
				seg.Blocks = append(seg.Blocks, torchsnap.Block{Addr: a, Size: b.size, Site: b.site})
			}
		}
		segs = append(segs, seg)
	}
	if err := w.Close(segs); err != nil {
		return err
	}
	return f.Close()
}

type blockAt struct {
	size uint64
	site string
}

// snapGPU places blocks first-fit in segments and writes the entries.
type snapGPU struct {
	w        *torchsnap.Writer
	n, wrote int
	err      error
	t        int64
	segs     []*snapSeg
	blocks   map[uint64]blockAt
}

type snapSeg struct {
	addr, size uint64
	used       [][2]uint64 // live blocks' [addr, end), by addr
}

func (g *snapGPU) full() bool { return g.wrote >= g.n || g.err != nil }

func (g *snapGPU) write(action string, addr, size uint64, site string) {
	g.t += 20 + int64(g.wrote%3)*10
	if g.err == nil {
		g.err = g.w.Write(torchsnap.Entry{Action: action, Addr: addr, Size: size, Site: site, TimeUS: g.t})
	}
	g.wrote++
}

func (g *snapGPU) get(size uint64, site string) uint64 {
	size = (size + 511) &^ 511
	for _, s := range g.segs {
		at := s.addr
		for i, u := range s.used {
			if u[0]-at >= size {
				s.used = slices.Insert(s.used, i, [2]uint64{at, at + size})
				return g.handOut(at, size, site)
			}
			at = u[1]
		}
		if s.addr+s.size-at >= size {
			s.used = append(s.used, [2]uint64{at, at + size})
			return g.handOut(at, size, site)
		}
	}
	const segSize = 64 << 20
	s := &snapSeg{addr: 0x7f0000000000 + uint64(len(g.segs))<<32, size: max(segSize, (size+segSize-1)&^(segSize-1))}
	g.segs = append(g.segs, s)
	g.write(torchsnap.ActionSegmentAlloc, s.addr, s.size, "CUDACachingAllocator.cpp:1120")
	s.used = append(s.used, [2]uint64{s.addr, s.addr + size})
	return g.handOut(s.addr, size, site)
}

func (g *snapGPU) handOut(addr, size uint64, site string) uint64 {
	g.blocks[addr] = blockAt{size, site}
	g.write(torchsnap.ActionAlloc, addr, size, site)
	return addr
}

func (g *snapGPU) put(addr uint64) {
	b, ok := g.blocks[addr]
	if !ok || g.full() {
		return
	}
	for _, s := range g.segs {
		if addr >= s.addr && addr < s.addr+s.size {
			i := slices.IndexFunc(s.used, func(u [2]uint64) bool { return u[0] == addr })
			s.used = slices.Delete(s.used, i, i+1)
		}
	}
	delete(g.blocks, addr)
	g.write(torchsnap.ActionFreeRequested, addr, b.size, b.site)
	g.write(torchsnap.ActionFreeCompleted, addr, b.size, b.site)
}

// renderPage writes the page report.
func renderPage(rows []pageRow, runs int, svg string) []byte {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("# The HTML page: size and load time by snapshot size")
	p("")
	p("Written by `go run ./reports/gen -only page` on %s; regenerate it, never edit it.", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	p("")
	p("Each snapshot is a generated training loop (reports/gen/page.go: parameters, per step 24 layers' activations, a loss, gradients, the optimizer's state at the first step; blocks first-fit in 64 MiB segments; one frame an entry), written with traces/torchsnap's writer. `tlcheck export --format html` makes the page; a headless Chromium (%s) opens it %d times and the page reports, from the start of navigation, when its timeline is drawn (the first frame that shows it) and when the allocator's state at the peak is drawn (the document parsed, every life decoded: from then on a hover or a click answers at once). Medians. The export's time is mostly tlcheck reading and checking the snapshot.", rows[0].BrowserVer, runs)
	p("")
	p("![page size and load time by snapshot entries](%s)", svg)
	p("")
	p("| entries | snapshot | export (tlcheck) | page | blocks on the page | timeline drawn | state drawn | Chromium CPU time | load average | target |")
	p("|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		target := ""
		if r.Entries >= 1_000_000 {
			target = verdict(r.ReadyMs < 2000 && r.Page < 50<<20) + " (under 2 s, under 50 MB)"
		}
		p("| %s | %s | %s | %s | %s | %.0f ms | %.0f ms | %.0f ms | %.1f | %s |", group(r.Entries), mib(r.Snapshot), seconds(r.Export), mib(r.Page), group(r.Blocks), r.ReadyMs, r.StateMs, r.CPUMs, r.Load, target)
	}
	p("")
	p("The times are wall times on the machine named below, whose load average (runnable processes, over a minute) the table gives: on a shared machine a load above its cores stretches them. Chromium's CPU time (every process of the browser, from the navigation to the state drawn, at the kernel's 10 ms resolution) is what the page costs whatever the load; the smallest snapshot's is mostly the cost of opening a tab.")
	p("")
	p("The page's size grows with the lives (blocks and segments), about %.1f bytes each at the largest size: the timeline is bounded (1,200 points per band, 13 bands), and the lives go as base64 columns of varints, after the page's script, which decodes them once the timeline is drawn. Machine: %s.", float64(rows[len(rows)-1].Page)/float64(max(rows[len(rows)-1].Blocks, 1)), machineLine())
	return b.Bytes()
}

// chromiumCPU is the CPU time (user and system) of the live processes
// whose command line names profile: the browser's, started with it as
// its user data folder, and its children's.
func chromiumCPU(profile string) time.Duration {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var ticks int64
	for _, p := range procs {
		cmd, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || !bytes.Contains(cmd, []byte(profile)) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(p, "stat"))
		if err != nil {
			continue
		}
		// The fields after the command's name, which is in parentheses:
		// utime and stime are the 14th and 15th of the line.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			ticks += u + s
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// loadAverage1 is the machine's load average over the last minute.
func loadAverage1() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return math.NaN()
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

func machineLine() string {
	m := describeMachine()
	return m.CPU + ", " + m.Cores + " cores"
}

// pageFigure draws page size (MiB) and the time to the drawn timeline
// (ms) against entries, on log-scaled entries.
func pageFigure(rows []pageRow) []byte {
	const w, h, l, r, t, bm = 640, 300, 60, 60, 30, 40
	pw, ph := float64(w-l-r), float64(h-t-bm)
	lx := func(n int) float64 {
		lo, hi := math.Log10(float64(rows[0].Entries)), math.Log10(float64(rows[len(rows)-1].Entries))
		if hi == lo {
			return l + pw/2
		}
		return l + (math.Log10(float64(n))-lo)/(hi-lo)*pw
	}
	maxMB, maxMs := 50.0, 2000.0
	for _, row := range rows {
		maxMB, maxMs = max(maxMB, float64(row.Page)/(1<<20)), max(maxMs, row.ReadyMs, row.StateMs)
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`, w, h)
	p(`<rect width="%d" height="%d" fill="#fff"/>`, w, h)
	p(`<text x="%d" y="16" font-size="13" font-weight="bold">HTML page of a snapshot: size and load time</text>`, l)
	for i := 0; i <= 4; i++ {
		y := float64(t) + ph - float64(i)/4*ph
		p(`<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>`, l, w-r, y, y)
		p(`<text x="%d" y="%.1f" text-anchor="end" fill="#1f77b4">%.4g MB</text>`, l-4, y+4, maxMB*float64(i)/4)
		p(`<text x="%d" y="%.1f" fill="#d62728">%.0f ms</text>`, w-r+4, y+4, maxMs*float64(i)/4)
	}
	yMB := func(v float64) float64 { return float64(t) + ph - v/maxMB*ph }
	yMs := func(v float64) float64 { return float64(t) + ph - v/maxMs*ph }
	p(`<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#1f77b4" stroke-dasharray="4 3"/><text x="%d" y="%.1f" fill="#1f77b4">50 MB limit</text>`, l, w-r, yMB(50), yMB(50), l+4, yMB(50)-3)
	p(`<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#d62728" stroke-dasharray="4 3"/><text x="%d" y="%.1f" fill="#d62728" text-anchor="end">2 s limit</text>`, l, w-r, yMs(2000), yMs(2000), w-r-4, yMs(2000)-3)
	line := func(color string, y func(pageRow) float64) {
		var pts []string
		for _, row := range rows {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", lx(row.Entries), y(row)))
			p(`<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, lx(row.Entries), y(row), color)
		}
		p(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`, strings.Join(pts, " "), color)
	}
	line("#1f77b4", func(row pageRow) float64 { return yMB(float64(row.Page) / (1 << 20)) })
	line("#d62728", func(row pageRow) float64 { return yMs(row.ReadyMs) })
	line("#ff9896", func(row pageRow) float64 { return yMs(row.StateMs) })
	line("#7f7f7f", func(row pageRow) float64 { return yMs(row.CPUMs) })
	for _, row := range rows {
		p(`<text x="%.1f" y="%d" text-anchor="middle">%s</text>`, lx(row.Entries), h-bm+16, group(row.Entries))
	}
	p(`<text x="%d" y="%d" text-anchor="middle">snapshot entries (log scale)</text>`, l+int(pw/2), h-6)
	p(`<text x="%d" y="%d" fill="#1f77b4">page size</text><text x="%d" y="%d" fill="#d62728">timeline drawn</text><text x="%d" y="%d" fill="#ff9896">state drawn</text><text x="%d" y="%d" fill="#7f7f7f">Chromium CPU time</text>`, l+10, t+30, l+90, t+30, l+190, t+30, l+280, t+30)
	p(`</svg>`)
	return b.Bytes()
}
