package export

import (
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/tlcheck/tlcheck/internal/safetext"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// pprofExport builds a profile (the format go tool pprof reads) of what
// each allocation site leaked, held at the peak and allocated. A site is a
// function of its own, with the file and line the site names where it has
// the form "file:line", so pprof's -top, -list-free views and flame graph
// rank sites as they rank functions.
//
// Its memory grows with the number of sites, not of events: the peak's
// share of each site is kept up to date by copying only the sites whose
// live bytes changed since the last peak, when a new peak is reached.
type pprofExport struct {
	w     io.Writer
	sites map[string]*siteStats
	live  uint64 // bytes live now, both spaces (as the model's peak counts them)
	peak  uint64
	dirty []*siteStats // sites whose live bytes changed since the last peak
}

// siteStats is what one site did.
type siteStats struct {
	site                       string
	allocObjects, allocBytes   int64
	leakedObjects, leakedBytes int64
	liveObjects, liveBytes     int64 // now
	peakObjects, peakBytes     int64 // when the trace's live bytes last peaked
	dirty                      bool  // in pprofExport.dirty
}

// pprofSampleTypes are the profile's values, in order; the first is the
// default that pprof shows.
var pprofSampleTypes = []*profile.ValueType{
	{Type: "leaked_bytes", Unit: "bytes"},
	{Type: "leaked_objects", Unit: "count"},
	{Type: "peak_live_bytes", Unit: "bytes"},
	{Type: "peak_live_objects", Unit: "count"},
	{Type: "alloc_bytes", Unit: "bytes"},
	{Type: "alloc_objects", Unit: "count"},
}

// noSite names the site of things made by events without one.
const noSite = "(no site)"

func newPprof(w io.Writer) *pprofExport {
	return &pprofExport{w: w, sites: make(map[string]*siteStats)}
}

func (p *pprofExport) stats(site string) *siteStats {
	if site == "" {
		site = noSite
	}
	s := p.sites[site]
	if s == nil {
		s = &siteStats{site: site}
		p.sites[site] = s
	}
	return s
}

func (p *pprofExport) begin(traces.Header) error { return nil }

func (p *pprofExport) born(l *model.Thing, _ stamp) {
	s := p.stats(l.Site)
	s.allocObjects++
	s.allocBytes += int64(l.Size)
	if !l.Kind.Counted() {
		return // a pool block: its bytes are its segment's
	}
	p.change(s, 1, int64(l.Size))
	p.live += l.Size
	if p.live > p.peak {
		p.peak = p.live
		for _, d := range p.dirty {
			d.peakObjects, d.peakBytes, d.dirty = d.liveObjects, d.liveBytes, false
		}
		clear(p.dirty)
		p.dirty = p.dirty[:0]
	}
}

func (p *pprofExport) died(l *model.Thing, _ stamp) {
	if !l.Kind.Counted() {
		return
	}
	p.change(p.stats(l.Site), -1, -int64(l.Size))
	p.live -= l.Size
}

// change moves a site's live totals and marks it for the next peak.
func (p *pprofExport) change(s *siteStats, objects, bytes int64) {
	s.liveObjects += objects
	s.liveBytes += bytes
	if !s.dirty {
		s.dirty = true
		p.dirty = append(p.dirty, s)
	}
}

func (p *pprofExport) counter(stamp, traces.Space, uint64) {}

// violation counts a leak against the site that made the leaked thing,
// which the leak's history names as "allocated".
func (p *pprofExport) violation(v *traces.Violation, _ stamp, leaked bool, size uint64) {
	if !leaked {
		return
	}
	s := p.stats(allocSite(v))
	s.leakedObjects++
	s.leakedBytes += int64(size)
}

// allocSite is the site that made what v names: its "allocated" event's.
func allocSite(v *traces.Violation) string {
	for _, r := range v.Related {
		if r.What == "allocated" {
			return r.Site
		}
	}
	return v.Site
}

// unleaked takes back a leak: the missed free came late, before end.
func (p *pprofExport) unleaked(l *model.Thing) {
	s := p.stats(l.Site)
	s.leakedObjects--
	s.leakedBytes -= int64(l.Size)
}

// finish writes the profile: one sample per site, sites in name order so
// that the same trace gives the same file.
func (p *pprofExport) finish(*Summary, []model.Thing, stamp) error {
	names := make([]string, 0, len(p.sites))
	for name := range p.sites {
		names = append(names, name)
	}
	slices.Sort(names)
	prof := &profile.Profile{
		SampleType:        pprofSampleTypes,
		DefaultSampleType: pprofSampleTypes[0].Type,
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            1,
		// What the bytes are, for pprof -comments: on the device they
		// are reserved, not allocated.
		Comments: []string{"peak_live_bytes: on the device, reserved bytes (segments and mapped ranges, at the site that reserved them); the pool blocks handed out (allocated bytes) lie inside them and are not counted there; alloc_bytes counts both"},
	}
	for i, name := range names {
		s := p.sites[name]
		file, line := splitSite(name)
		// go tool pprof prints names to a terminal: they are escaped.
		shown := safetext.Escape(name)
		fn := &profile.Function{ID: uint64(i + 1), Name: shown, SystemName: shown, Filename: safetext.Escape(file), StartLine: line}
		loc := &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: fn, Line: line}}}
		prof.Function = append(prof.Function, fn)
		prof.Location = append(prof.Location, loc)
		prof.Sample = append(prof.Sample, &profile.Sample{
			Location: []*profile.Location{loc},
			Value:    []int64{s.leakedBytes, s.leakedObjects, s.peakBytes, s.peakObjects, s.allocBytes, s.allocObjects},
		})
	}
	if err := prof.CheckValid(); err != nil {
		return err // a bug here, not the input's fault; still no panic
	}
	return prof.Write(p.w)
}

// splitSite splits a site "file:line" into its file and line; another
// site is a file of its own with line 0.
func splitSite(site string) (file string, line int64) {
	i := strings.LastIndexByte(site, ':')
	if i <= 0 {
		return "", 0
	}
	n, err := strconv.ParseInt(site[i+1:], 10, 64)
	if err != nil || n <= 0 {
		return "", 0
	}
	return site[:i], n
}
