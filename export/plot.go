package export

import (
	"strconv"
	"strings"
)

// plotSeries downsamples a value that changes at events (the live bytes of
// one space) to at most maxPlotPoints buckets of equal width in events,
// keeping each bucket's highest value, so that no peak is lost however
// long the trace. Widths double as the trace grows: memory is bounded and
// the work per event constant, amortized.
type plotSeries struct {
	width   int // events per bucket
	buckets []plotBucket
	now     uint64 // the value now
	top     uint64 // the highest value seen
}

// plotBucket covers events [i*width, (i+1)*width): the highest value after
// any of them, and the value after the last.
type plotBucket struct {
	max, last uint64
	carried   bool // no event of the bucket has set it: max is the value carried in
}

// maxPlotPoints bounds the points of a plot: enough for a page's width.
const maxPlotPoints = 512

func newPlotSeries() *plotSeries { return &plotSeries{width: 1} }

// set records that the value became v at event.
func (s *plotSeries) set(event int, v uint64) {
	s.extend(event)
	i := event / s.width
	b := &s.buckets[i]
	if b.carried && event == i*s.width {
		b.max = v // the carried value never held after an event of this bucket
	}
	b.max, b.last, b.carried = max(b.max, v), v, false
	s.now, s.top = v, max(s.top, v)
}

// extend adds buckets, holding the value now, up to the one of event.
func (s *plotSeries) extend(event int) {
	for event/s.width >= maxPlotPoints {
		s.halve()
	}
	for len(s.buckets) <= event/s.width {
		s.buckets = append(s.buckets, plotBucket{max: s.now, last: s.now, carried: true})
	}
}

// halve merges buckets in pairs and doubles their width.
func (s *plotSeries) halve() {
	n := 0
	for i := 0; i < len(s.buckets); i += 2 {
		b := s.buckets[i]
		if i+1 < len(s.buckets) {
			c := s.buckets[i+1]
			b.max, b.last = max(b.max, c.max), c.last
		}
		s.buckets[n] = b
		n++
	}
	s.buckets = s.buckets[:n]
	s.width *= 2
}

// Plot geometry, in SVG user units.
const (
	plotW = 720
	plotH = 160
)

// path returns the SVG path of the series as steps, each bucket drawn at
// its highest value, over events [0, events) scaled to plotW by plotH with
// top at the full height; and the same path closed along the bottom, to
// fill. The strings hold only digits, spaces, '.', and path letters.
func (s *plotSeries) path(events int, top uint64) (line, area string) {
	if len(s.buckets) == 0 || events <= 0 || top == 0 {
		return "", ""
	}
	x := func(ev int) string {
		return strconv.FormatFloat(float64(min(ev, events))*plotW/float64(events), 'f', 1, 64)
	}
	y := func(v uint64) string {
		return strconv.FormatFloat(plotH-float64(v)*plotH/float64(top), 'f', 1, 64)
	}
	var b strings.Builder
	for i, bk := range s.buckets {
		if i == 0 {
			b.WriteString("M0 " + y(bk.max))
		} else {
			b.WriteString(" V" + y(bk.max))
		}
		b.WriteString(" H" + x((i+1)*s.width))
	}
	line = b.String()
	return line, line + " V" + strconv.Itoa(plotH) + " H0 Z"
}
