package check

import (
	"slices"

	"github.com/tlcheck/tlcheck/traces"
)

// A collector builds one file's outcome as the model hands it violations
// (model.ReplayFunc), so that what replay holds is bounded however much a
// trace reports: it lists at most max violations (0: every one) and only
// counts the rest, by kind, and it sums leaks by the site that allocated
// what leaked, as LeakSanitizer does, into one line a site. A trace that
// leaks two million blocks from a few sites then costs a few lines and a
// few kilobytes, not two million reports.
type collector struct {
	p   *Policy
	max int
	o   Outcome
	at  map[string]int // leak site -> index in o.sites
}

func newCollector(file string, p *Policy, max int) *collector {
	return &collector{p: p, max: max, o: Outcome{File: file}, at: map[string]int{}}
}

// add takes the next violation, in event order; size is the bytes of what
// it names.
func (c *collector) add(v traces.Violation, size uint64) {
	r := c.p.suppressedBy(&v)
	if v.Kind == traces.Leak && r == nil {
		c.addLeak(&v, size)
	}
	if c.max > 0 && len(c.o.By) >= c.max {
		if r != nil {
			c.o.UnlistedSuppressed++
		} else {
			if c.o.Unlisted == nil {
				c.o.Unlisted = map[traces.Kind]int{}
			}
			c.o.Unlisted[v.Kind]++
		}
		return
	}
	c.o.Report.Violations = append(c.o.Report.Violations, v)
	c.o.By = append(c.o.By, r)
}

// addLeak counts a leak to the site that allocated what leaked.
func (c *collector) addLeak(v *traces.Violation, size uint64) {
	made := Allocated(v)
	i, ok := c.at[made.Site]
	if !ok {
		i = len(c.o.LeakSites)
		c.at[made.Site] = i
		c.o.LeakSites = append(c.o.LeakSites, LeakSite{Site: made.Site, Event: made.Event, Line: made.Line})
	}
	s := &c.o.LeakSites[i]
	s.Objects++
	s.Bytes += size
}

// Allocated is the event that made what v names: the related "allocated"
// event, else v's own.
func Allocated(v *traces.Violation) traces.Related {
	for _, r := range v.Related {
		if r.What == "allocated" {
			return r
		}
	}
	return traces.Related{Event: v.Event, Line: v.Line, Site: v.Site}
}

// finish returns the outcome: the model's totals with the violations
// listed, or the input error.
func (c *collector) finish(rep traces.Report, err error) Outcome {
	if err != nil {
		return Outcome{File: c.o.File, Err: err}
	}
	o := c.o
	rep.Violations = o.Report.Violations
	o.Report = rep
	o.Max = c.max
	slices.SortStableFunc(o.LeakSites, func(a, b LeakSite) int {
		switch {
		case a.Bytes != b.Bytes:
			return cmpDesc(a.Bytes, b.Bytes)
		case a.Objects != b.Objects:
			return cmpDesc(uint64(a.Objects), uint64(b.Objects))
		}
		return 0 // first found first
	})
	return o
}

func cmpDesc(a, b uint64) int {
	if a > b {
		return -1
	}
	return 1
}

// LeakSite is the leaks of one allocation site.
type LeakSite struct {
	Site    string `json:"site"` // "" when the allocating event had none
	Objects int    `json:"objects"`
	Bytes   uint64 `json:"bytes"`
	// Where the first of them reported was allocated: an example to
	// start from.
	Event int `json:"event"`
	Line  int `json:"line,omitempty"`
}

// Of makes the outcome of a report in hand (model.Replay's), every
// violation listed.
func Of(file string, rep traces.Report, p *Policy) Outcome {
	c := newCollector(file, p, 0)
	for _, v := range rep.Violations {
		c.add(v, 0)
	}
	return c.finish(rep, nil)
}
