package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/internal/plural"
	"github.com/tlcheck/tlcheck/traces"
)

// writeGateLines ends a trace's human report under a gate: how it stands
// against the baseline.
func writeGateLines(w io.Writer, o *check.Outcome, s style) {
	if o.Err != nil {
		return
	}
	if !o.InBaseline {
		fmt.Fprintf(w, "  %sNEW TRACE%s: not in the baseline, so every finding is new and its totals are not compared\n", s.warn, s.reset)
		return
	}
	for _, f := range o.Fixed {
		fmt.Fprintf(w, "  %sFIXED%s: %s, %d fewer than the baseline accepts (--update tightens it)\n", s.ok, s.reset, safe(f.Fingerprint.String()), f.Count)
	}
	for _, g := range o.Growth {
		st, reset := "", ""
		if g.Exceeded() {
			st, reset = s.err, s.reset
		}
		fmt.Fprintf(w, "  %s%s%s\n", st, g, reset)
	}
}

// writeGateVerdict is the last line of a gate's human report.
func writeGateVerdict(w io.Writer, outs []check.Outcome, p *check.Policy, info Run, s style) {
	for _, n := range info.Notes {
		fmt.Fprintf(w, "NOTE: %s\n", safe(n))
	}
	var fails, passes []string
	var newN, grew, noEnd, bad, known, fixed int
	for i := range outs {
		o := &outs[i]
		if o.Err != nil {
			bad++
			continue
		}
		newN += len(o.Failing(p))
		if p.FailsSuspects() {
			newN += len(o.NewSuspects())
		}
		for j := range o.Suspects {
			if o.SuspectKnown[j] {
				known++
			}
		}
		grew += len(o.Grew())
		if o.IncompleteFails(p) {
			noEnd++
		}
		for j := range o.Report.Violations {
			if o.By[j] == nil && o.Known[j] {
				known++
			}
		}
		for _, f := range o.Fixed {
			fixed += f.Count
		}
	}
	if bad > 0 {
		fails = append(fails, plural.Count(bad, "unreadable trace"))
	}
	if newN > 0 {
		fails = append(fails, plural.Count(newN, "new finding"))
	}
	if grew > 0 {
		fails = append(fails, plural.Count(grew, "total")+" grown beyond the tolerance")
	}
	if noEnd > 0 {
		fails = append(fails, plural.Count(noEnd, "trace")+" without end")
	}
	if known > 0 {
		passes = append(passes, fmt.Sprintf("%d known", known))
	}
	if fixed > 0 {
		passes = append(passes, fmt.Sprintf("%d fixed: --update tightens the baseline", fixed))
	}
	aside := ""
	if len(passes) > 0 {
		aside = " (" + strings.Join(passes, ", ") + ")"
	}
	switch {
	case info.Update && bad == 0:
		// What would have failed is what the new baseline accepts.
		what := "nothing new"
		if len(fails) > 0 {
			what = strings.Join(fails, ", ")
		}
		fmt.Fprintf(w, "%sGATE: UPDATE%s: %s, accepted into %s%s\n", s.warn, s.reset, what, info.Baseline, aside)
		return
	case len(fails) > 0:
		fmt.Fprintf(w, "%sGATE: FAIL%s: %s against %s%s\n", s.err, s.reset, strings.Join(fails, ", "), info.Baseline, aside)
		return
	}
	fmt.Fprintf(w, "%sGATE: PASS%s: nothing beyond %s%s\n", s.ok, s.reset, info.Baseline, aside)
}

// gateJSON is what a gate adds to a trace's JSON report.
type gateJSON struct {
	Known      []traces.Violation      `json:"known"`       // findings the baseline accepts
	Fixed      []check.BaselineFinding `json:"fixed"`       // in the baseline, gone now
	InBaseline bool                    `json:"in_baseline"` // the baseline has this trace
	Growth     []growthJSON            `json:"growth"`      // totals against the baseline
	Verdict    string                  `json:"verdict"`     // "pass" or "fail"
	Reasons    []string                `json:"reasons"`     // why it fails; [] when it passes
}

type growthJSON struct {
	Metric   string `json:"metric"` // "leaked_bytes", "peak_live_bytes"
	Baseline uint64 `json:"baseline"`
	Now      uint64 `json:"now"`
	Allowed  uint64 `json:"allowed"`
	Exceeded bool   `json:"exceeded"`
}

func newGateJSON(o *check.Outcome, p *check.Policy, known []traces.Violation) *gateJSON {
	g := &gateJSON{Known: []traces.Violation{}, Fixed: []check.BaselineFinding{}, InBaseline: o.InBaseline,
		Growth: []growthJSON{}, Verdict: "pass", Reasons: o.FailureReasons(p)}
	for _, v := range known {
		g.Known = append(g.Known, contractViolation(v))
	}
	g.Fixed = append(g.Fixed, o.Fixed...)
	for _, m := range o.Growth {
		g.Growth = append(g.Growth, growthJSON{strings.ReplaceAll(m.Name, " ", "_"), m.Was, m.Now, m.Allowed, m.Exceeded()})
	}
	if len(g.Reasons) > 0 {
		g.Verdict = "fail"
	} else {
		g.Reasons = []string{}
	}
	return g
}
