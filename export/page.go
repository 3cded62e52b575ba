package export

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"

	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// The HTML page's memory view: the active-memory timeline stacked by
// allocation site, the allocator's state at a chosen moment and the
// findings on the timeline. pageBuilder hears each life as the model
// decides it and keeps it compactly; at the end (pagedata.go) the lives
// become a bounded timeline (maxPageBuckets points per band, whatever the
// trace's length) and columns the page decodes only when asked (a hover,
// a click). The script and style are page.js and page.css.

// PageExtras are results the page shows beside the model's, computed by
// analyses of their own: leak suspects of a periodic run and the
// explanation of an out-of-memory error. Every field is JSON: the page
// embeds them as data and renders them as text, so any string is safe.
// A nil PageExtras, or empty fields, show nothing.
type PageExtras struct {
	Suspects []PageSuspect `json:"suspects,omitempty"`
	OOM      *PageOOM      `json:"oom,omitempty"`
}

// PageSuspect is a site whose live blocks grow by a steady amount each
// iteration of a loop and are never freed.
type PageSuspect struct {
	Site               string   `json:"site"`
	Stack              []string `json:"stack,omitempty"` // innermost first, where known
	BytesPerIteration  uint64   `json:"bytesPerIteration"`
	BlocksPerIteration float64  `json:"blocksPerIteration"`
	Iterations         int      `json:"iterations"`           // iterations seen
	Confidence         string   `json:"confidence,omitempty"` // how sure, in words ("12 iterations, steady")
	// Events are the events that made the suspect's blocks, the evidence;
	// the page marks them on the timeline.
	Events []int `json:"events,omitempty"`
}

// PageOOM explains an out-of-memory error: what was asked, what was held
// and what other allocator settings would have done.
type PageOOM struct {
	Event     int    `json:"event"`   // the event of the failed request
	Request   uint64 `json:"request"` // bytes asked for
	Capacity  uint64 `json:"capacity,omitempty"`
	Allocated uint64 `json:"allocated"`
	Reserved  uint64 `json:"reserved"`
	// Pools are the reserved-but-free bytes by pool and stream.
	Pools []PageOOMPool `json:"pools,omitempty"`
	// Sites are the sites that held the most at the error, most first.
	Sites  []PageSiteBytes `json:"sites,omitempty"`
	WhatIf []PageWhatIf    `json:"whatIf,omitempty"`
	Note   string          `json:"note,omitempty"`
}

// PageOOMPool is one pool's free space at an out-of-memory error.
type PageOOMPool struct {
	Pool        string `json:"pool"` // "large, stream 0"
	FreeBytes   uint64 `json:"freeBytes"`
	LargestFree uint64 `json:"largestFree"`
}

// PageSiteBytes is what one site held.
type PageSiteBytes struct {
	Site  string `json:"site"`
	Bytes uint64 `json:"bytes"`
}

// PageWhatIf is a replay of the trace under other allocator settings.
type PageWhatIf struct {
	Setting      string `json:"setting"` // "max_split_size_mb:128"
	PeakReserved uint64 `json:"peakReserved"`
	Fits         bool   `json:"fits"` // the failed request would have fit
}

// maxPageLives bounds the lives the page keeps (64 bytes each here, and
// about 18 on the page, so that the page stays under 50 MB); past it the
// page says where its detail stops. A 1-million-entry snapshot holds
// about 340,000. A variable, so that a test can lower it.
var maxPageLives = 2 << 20

// maxPageMarks bounds the findings marked on the timeline.
const maxPageMarks = 20000

// pageLife is one thing's life.
type pageLife struct {
	born, died   int   // events; died is -1 while live
	bornT, diedT int64 // ns, where the trace has times
	addr, size   uint64
	site         int32 // an index of pageBuilder.sites
	seg          int32 // a pool block's segment, an index of lives; -1 for none
	kind         model.ThingKind
}

// pageMark is a finding on the timeline.
type pageMark struct {
	event   int
	t       int64
	kind    traces.Kind
	message string
}

type pageBuilder struct {
	lives   []pageLife
	byID    map[int]int32 // a live thing's life, by the model's number
	sites   []string
	siteIdx map[string]int32
	marks   []pageMark
	device  bool  // a segment or pool block was made: the page shows the device
	hasT    bool  // some event had a time
	firstT  int64 // the first time seen
	cut     int   // the event where lives stopped being kept (maxPageLives); -1 for none
	extras  *PageExtras
}

func newPageBuilder(extras *PageExtras) *pageBuilder {
	return &pageBuilder{byID: make(map[int]int32), siteIdx: make(map[string]int32), cut: -1, extras: extras}
}

func (p *pageBuilder) site(s string) int32 {
	i, ok := p.siteIdx[s]
	if !ok {
		i = int32(len(p.sites))
		p.sites = append(p.sites, s)
		p.siteIdx[s] = i
	}
	return i
}

func (p *pageBuilder) born(t *model.Thing, at stamp) {
	dev := t.Kind == model.Segment || t.Kind == model.PoolBlock
	if !dev && !t.Kind.Counted() {
		return // inside something counted already, on the heap
	}
	p.device = p.device || dev
	p.seen(at)
	if len(p.lives) >= maxPageLives {
		if p.cut < 0 {
			p.cut = at.event
		}
		return
	}
	l := pageLife{born: at.event, died: -1, bornT: at.t, addr: uint64(t.Addr), size: t.Size, site: p.site(t.Site), seg: -1, kind: t.Kind}
	if t.Segment != 0 {
		if s, ok := p.byID[t.Segment]; ok {
			l.seg = s
		}
	}
	p.byID[t.ID] = int32(len(p.lives))
	p.lives = append(p.lives, l)
}

func (p *pageBuilder) died(t *model.Thing, at stamp) {
	i, ok := p.byID[t.ID]
	if !ok {
		return
	}
	delete(p.byID, t.ID)
	l := &p.lives[i]
	l.died, l.diedT = at.event, at.t
	p.seen(at)
}

// seen notes a stamp's time.
func (p *pageBuilder) seen(at stamp) {
	if at.hasT && !p.hasT {
		p.hasT, p.firstT = true, at.t
	}
}

func (p *pageBuilder) violation(v *traces.Violation, at stamp) {
	p.seen(at)
	if len(p.marks) < maxPageMarks {
		p.marks = append(p.marks, pageMark{event: at.event, t: at.t, kind: v.Kind, message: safetext.Escape(v.Message)})
	}
}

// pageView is the memory view as the template takes it: the script, its
// style and its data, each inserted verbatim (the data is JSON whose
// '<', '>' and '&' are escaped, so it cannot end its script element).
type pageView struct {
	Data   template.JS
	Lives  template.JS
	Script template.JS
	Style  template.CSS
}

//go:embed page.js
var pageScript string

//go:embed page.css
var pageStyle string

// pageScriptHash is the script's hash for the page's Content-Security-
// Policy, which lets only that script run and forbids every request: a
// site in the trace that were markup still could not run or fetch.
var pageScriptHash = func() string {
	h := sha256.Sum256([]byte(pageScript))
	return "sha256-" + base64.StdEncoding.EncodeToString(h[:])
}()

// view returns the memory view, or nil where nothing was allocated.
func (p *pageBuilder) view(events int) (*pageView, error) {
	if len(p.lives) == 0 && p.extras == nil {
		return nil, nil
	}
	d := p.data(events)
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("the page's data: %w", err)
	}
	l, err := json.Marshal(d.Lives)
	if err != nil {
		return nil, fmt.Errorf("the page's lives: %w", err)
	}
	return &pageView{Data: template.JS(b), Lives: template.JS(l), Script: template.JS(pageScript), Style: template.CSS(pageStyle)}, nil
}

// The memory section of the page, a template of htmlTemplate's set.
var _ = template.Must(htmlTemplate.New("memory").Parse(`{{with .Memory}}<section id="memory">
<h2>Memory over time</h2>
<p id="mem-sub"></p>
<noscript><p>This part of the page needs JavaScript, which is off.</p></noscript>
<div id="mem-legend"></div>
<div id="mem-axis"></div>
<div id="mem-chart"><svg id="mem-timeline" role="img" aria-label="memory over time, stacked by allocation site"></svg><div id="mem-tip" hidden></div></div>
<div id="mem-hover" class="panel"><span class="hint">Hover the timeline: the site under the pointer, its bytes and its largest blocks show here.</span></div>
<h3 id="mem-state-h">Allocator state</h3>
<p id="mem-state-title">Click the timeline to see the segments and blocks at that moment.</p>
<div id="mem-statebox"><canvas id="mem-state" height="0"></canvas></div>
<div id="mem-block" class="panel"></div>
<section id="mem-suspects" class="extra" hidden><h3>Leak suspects</h3></section>
<section id="mem-oom" class="extra" hidden><h3>Why it ran out of memory</h3></section>
<script type="application/json" id="mem-data">{{.Data}}</script>
</section>
{{end}}`))
