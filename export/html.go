package export

import (
	"cmp"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// htmlExport writes one self-contained page: the verdict, the memory view
// (page.go), each finding with the events that explain it, and a plot of
// live bytes per address space. It needs no network (inline CSS, SVG and
// the memory view's script, the only one its policy lets run), so it opens
// from a CI artifact or a mail. Everything the trace wrote (sites,
// messages) goes through html/template, which escapes it, or as JSON data
// that the script sets as text.
//
// It keeps at most maxHTMLFindings findings and maxPlotPoints points per
// plot, so a trace of any length makes a page a browser opens.
type htmlExport struct {
	w        io.Writer
	name     string
	source   string
	findings []htmlFinding
	plots    [2]*plotSeries // by traces.Space
	sites    map[string]*htmlLeakSite
	order    []*htmlLeakSite // sites in the order their first leak was found
	page     *pageBuilder    // the memory view (page.go)
}

// htmlLeakSite is the leaks of one allocation site, as the text report's
// LEAKS BY SITE sums them.
type htmlLeakSite struct {
	Site    string // "" where the allocating event had none
	Objects int
	Bytes   uint64
	Event   int // where the first of them was allocated
}

// maxHTMLSites bounds the leak sites shown, biggest first.
const maxHTMLSites = 100

// maxHTMLFindings bounds the findings shown; the page says how many more
// there were (the totals count them all).
const maxHTMLFindings = 1000

type htmlFinding struct {
	traces.Violation
}

// At is where the finding happened: "event 7 (line 9) a.tl:4".
func (f htmlFinding) At() string { return eventAt(f.Event, f.Line, f.Site) }

// ObjectName names the model's object, or is "".
func (f htmlFinding) ObjectName() string {
	if f.Object == 0 {
		return ""
	}
	return "object #" + strconv.Itoa(f.Object)
}

// eventAt formats an event's place for the page.
func eventAt(event, line int, site string) string {
	s := "event " + strconv.Itoa(event)
	if line > 0 {
		s += " (line " + strconv.Itoa(line) + ")"
	}
	if site != "" {
		s += " " + site
	}
	return s
}

func newHTML(w io.Writer, name string) *htmlExport {
	return &htmlExport{w: w, name: safetext.Escape(name), plots: [2]*plotSeries{newPlotSeries(), newPlotSeries()}, sites: make(map[string]*htmlLeakSite)}
}

func (h *htmlExport) begin(hd traces.Header) error {
	h.source = safetext.Escape(hd.Source)
	return nil
}

func (h *htmlExport) born(t *model.Thing, at stamp) { h.page.born(t, at) }
func (h *htmlExport) died(t *model.Thing, at stamp) { h.page.died(t, at) }
func (h *htmlExport) unleaked(*model.Thing)         {}

func (h *htmlExport) counter(at stamp, sp traces.Space, bytes uint64) {
	h.plots[sp].set(at.event, bytes)
}

func (h *htmlExport) violation(v *traces.Violation, at stamp, _ bool, size uint64) {
	h.page.violation(v, at)
	if v.Kind == traces.Leak {
		site, event := allocSite(v), v.Event
		for _, r := range v.Related {
			if r.What == "allocated" {
				event = r.Event
				break
			}
		}
		s := h.sites[site]
		if s == nil {
			s = &htmlLeakSite{Site: safetext.Escape(site), Event: event}
			h.sites[site] = s
			h.order = append(h.order, s)
		}
		s.Objects++
		s.Bytes += size
	}
	if len(h.findings) < maxHTMLFindings {
		// What the trace wrote is shown escaped (safetext): the page is
		// valid UTF-8 with no control characters, whatever the input.
		vv := *v
		vv.Site, vv.Message = safetext.Escape(v.Site), safetext.Escape(v.Message)
		vv.Related = append([]traces.Related(nil), v.Related...) // Step reuses its slices
		for i := range vv.Related {
			vv.Related[i].Site, vv.Related[i].What = safetext.Escape(vv.Related[i].Site), safetext.Escape(vv.Related[i].What)
		}
		h.findings = append(h.findings, htmlFinding{vv})
	}
}

// htmlPage is what the template shows.
type htmlPage struct {
	Name, Source string
	Verdict      string
	Clean        bool
	Report       traces.Report
	Violations   int
	Findings     []htmlFinding
	Hidden       int // findings past maxHTMLFindings
	Plots        []htmlPlot
	TimeNote     string
	LeakSites    []*htmlLeakSite // biggest first, at most maxHTMLSites
	MoreSites    int             // sites past maxHTMLSites
	Memory       *pageView       // the memory view, nil for none
	ScriptHash   string          // the memory view's script, for the page's CSP
}

type htmlPlot struct {
	Space      string
	Shows      string // what the line measures, for the device: "reserved"
	Also       string // the device's allocated bytes, which the line does not show
	Line, Area string
	Top        string // the highest value, as text
	Now        string // the value at the end
	YTop, YMid string // the y axis' labels: the highest value and half of it
	Events     int
	W, H       int
}

func (h *htmlExport) finish(sum *Summary, _ []model.Thing, last stamp) error {
	events := sum.Report.Events
	page := htmlPage{
		Name:       h.name,
		Source:     h.source,
		Verdict:    verdict(sum),
		Clean:      sum.Violations == 0,
		Report:     sum.Report,
		Violations: sum.Violations,
		Findings:   h.findings,
		Hidden:     sum.Violations - len(h.findings),
	}
	for _, sp := range []traces.Space{traces.SpaceHeap, traces.SpaceDevice} {
		s := h.plots[sp]
		if s.top == 0 {
			continue // the space was never used
		}
		if events > 0 {
			s.extend(events - 1)
		}
		line, area := s.path(events, s.top)
		var shows, also string
		if sp == traces.SpaceDevice {
			d := sum.Device
			shows = "reserved (segments and mapped ranges)"
			also = "allocated (pool blocks): peak " + bytesText(d.PeakAllocated) + ", at the end " + bytesText(d.Allocated)
		}
		page.Plots = append(page.Plots, htmlPlot{
			Space: sp.String(), Shows: shows, Also: also, Line: line, Area: area,
			Top: bytesText(s.top), Now: bytesText(s.now),
			YTop: shortBytes(s.top), YMid: shortBytes(s.top / 2),
			Events: events, W: plotW, H: plotH,
		})
	}
	sites := slices.Clone(h.order)
	slices.SortStableFunc(sites, func(a, b *htmlLeakSite) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.Objects, a.Objects)) // first found first
	})
	if len(sites) > maxHTMLSites {
		page.MoreSites = len(sites) - maxHTMLSites
		sites = sites[:maxHTMLSites]
	}
	page.LeakSites = sites
	mem, err := h.page.view(events)
	if err != nil {
		return err
	}
	page.Memory, page.ScriptHash = mem, pageScriptHash
	return htmlTemplate.Execute(h.w, page)
}

// shortBytes is "1.5 MiB", or "64 B": an axis label.
func shortBytes(n uint64) string {
	if n < 1024 {
		return strconv.FormatUint(n, 10) + " B"
	}
	s := bytesText(n)
	return s[:strings.IndexByte(s, '(')-1]
}

// bytesText is "1.5 MiB (1572864 bytes)", or "64 bytes".
func bytesText(n uint64) string {
	exact := strconv.FormatUint(n, 10) + " bytes"
	if n == 1 {
		exact = "1 byte"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	if n < 1024 {
		return exact
	}
	// Step up while the value to one decimal would be 1024.0 or more:
	// 1048575 bytes is "1.0 MiB", not "1024.0 KiB".
	v, u := float64(n)/1024, 0
	for v >= 1023.95 && u < len(units)-1 {
		v, u = v/1024, u+1
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[u] + " (" + exact + ")"
}

// htmlTemplate is the page. html/template escapes every value by its
// context (text, attribute, SVG path), so a site such as "<script>" shows
// as text and runs nothing.
var htmlTemplate = template.Must(template.New("export").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src '{{.ScriptHash}}'">
<title>tlcheck: {{.Name}}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 60em; padding: 0 1em; color: #222; }
h1 { font-size: 1.4em; margin-bottom: .2em; }
h2 { font-size: 1.15em; margin-top: 1.6em; }
code, .mono { font-family: ui-monospace, monospace; font-size: 13px; }
#verdict { padding: .6em .9em; border-radius: 4px; font-weight: 600; }
#verdict.clean { background: #e6f4ea; color: #137333; }
#verdict.bad { background: #fce8e6; color: #a50e0e; }
table.totals td { padding: .1em 1em .1em 0; }
ol.findings { padding-left: 1.6em; }
li.finding { margin: .6em 0; }
.kind { font-weight: 600; color: #a50e0e; }
.history { margin: .2em 0 0 1em; color: #444; }
.plotrow { display: flex; align-items: stretch; }
.yaxis { display: flex; flex-direction: column; justify-content: space-between; min-width: 5.5em; padding-right: .4em; text-align: right; color: #555; font-size: 12px; }
svg.plot { flex: 1; min-width: 0; height: auto; background: #fafafa; border: 1px solid #ddd; }
svg.plot .line { fill: none; stroke: #1a73e8; stroke-width: 1.5; vector-effect: non-scaling-stroke; }
svg.plot .area { fill: #1a73e8; fill-opacity: .15; stroke: none; }
.axis { color: #555; font-size: 12px; display: flex; justify-content: space-between; margin-left: 5.9em; }
table.sites td { padding: .1em 1em .1em 0; }
table.sites td.n { text-align: right; }
</style>
{{with .Memory}}<style>{{.Style}}</style>{{end}}
</head>
<body>
<h1>tlcheck: <span class="mono">{{.Name}}</span></h1>
{{with .Source}}<p>written by <span class="mono">{{.}}</span></p>{{end}}
<p id="verdict" class="{{if .Clean}}clean{{else}}bad{{end}}">{{.Verdict}}</p>
<table class="totals" id="totals">
<tr><td>events</td><td>{{.Report.Events}}</td></tr>
<tr><td>objects and blocks made</td><td>{{.Report.Objects}}</td></tr>
<tr><td>peak live bytes</td><td>{{.Report.PeakLiveBytes}}</td></tr>
{{if .Report.Complete}}<tr><td>leaked</td><td>{{.Report.Leaked.Objects}} objects ({{.Report.Leaked.Bytes}} bytes)</td></tr>
<tr><td>still reachable</td><td>{{.Report.StillReachable.Objects}} objects ({{.Report.StillReachable.Bytes}} bytes)</td></tr>{{end}}
</table>

{{template "memory" .}}
<h2>Live bytes</h2>
{{range .Plots}}<figure class="space" data-space="{{.Space}}">
<figcaption>{{.Space}}{{if .Shows}}, {{.Shows}}{{end}}: peak {{.Top}}, at the end {{.Now}}{{if .Also}}; {{.Also}}{{end}}</figcaption>
<div class="plotrow">
<div class="yaxis" aria-hidden="true"><span>{{.YTop}}</span><span>{{.YMid}}</span><span>0</span></div>
<svg class="plot" viewBox="0 0 {{.W}} {{.H}}" preserveAspectRatio="none" role="img" aria-label="live bytes of the {{.Space}} over the trace">
<title>live {{.Space}} bytes over {{.Events}} events (highest value per step)</title>
<path class="area" d="{{.Area}}"/>
<path class="line" d="{{.Line}}"/>
</svg>
</div>
<div class="axis"><span>event 0</span><span>event {{.Events}}</span></div>
</figure>
{{else}}<p id="noplot">Nothing was allocated.</p>
{{end}}
{{if .LeakSites}}<h2>Leaks by site</h2>
<table class="sites" id="leaksites">
<tr><th>bytes</th><th>objects</th><th>allocated at</th><th>the first at</th></tr>
{{range .LeakSites}}<tr class="site"><td class="n">{{.Bytes}}</td><td class="n">{{.Objects}}</td><td>{{if .Site}}<code>{{.Site}}</code>{{else}}an event with no site{{end}}</td><td>event {{.Event}}</td></tr>
{{end}}</table>
{{if .MoreSites}}<p id="moresites">and {{.MoreSites}} more sites, not shown.</p>{{end}}
{{end}}
<h2>Findings</h2>
{{if .Findings}}<ol class="findings">
{{range .Findings}}<li class="finding" data-kind="{{.Kind}}"><span class="kind">{{.Kind}}</span> at {{.At}}, addr <code>{{.Addr}}</code>{{with .ObjectName}}, {{.}}{{end}}
<div class="message">{{.Message}}</div>
{{if .Related}}<ul class="history">
{{range .Related}}<li>{{.What}}: event {{.Event}}{{if .Line}} (line {{.Line}}){{end}}{{with .Site}} <code>{{.}}</code>{{end}}</li>
{{end}}</ul>{{end}}
</li>
{{end}}</ol>
{{if .Hidden}}<p id="hidden">and {{.Hidden}} more findings, not shown (the totals count them).</p>{{end}}
{{else}}<p id="nofindings">None.</p>
{{end}}
{{with .Memory}}<script>{{.Script}}</script>
<script type="application/json" id="mem-lives">{{.Lives}}</script>{{end}}
</body>
</html>
`))
