package check

import (
	"github.com/tlcheck/tlcheck/check/suspect"
	"github.com/tlcheck/tlcheck/internal/plural"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// Outcome is the verdict on one file under a run's policy (and, under a
// gate, its baseline): a value the report writers render and the command
// turns into an exit code.
type Outcome struct {
	File     string
	Err      error         // the file could not be read: nothing was checked
	Report   traces.Report // the model's totals and the violations listed
	Snapshot bool          // a PyTorch memory snapshot, taken mid-run
	// Device is a snapshot's device memory, allocated (pool blocks) and
	// reserved (segments and mapped ranges), which Report's peak live
	// bytes does not tell apart; nil for other inputs.
	Device *model.DeviceBytes

	// Suspects are the leak suspects of a trace without an end, where the
	// policy asked for them (Policy.FailsSuspects); SuspectsSearched says
	// a search ran.
	Suspects         []suspect.Suspect
	SuspectsSearched bool

	// By[i] is the rule that suppresses Report.Violations[i], or nil.
	By []*Rule

	// What the bound on listed findings (Max, 0 for none) left out of
	// Report.Violations: how many of each kind counted against the run,
	// and how many were suppressed. And the leaks summed by allocation
	// site, biggest first, all of them.
	Max                int
	Unlisted           map[traces.Kind]int
	UnlistedSuppressed int
	LeakSites          []LeakSite

	// Under a gate (Compare) only.
	Gated      bool
	InBaseline bool   // the baseline had an entry for this trace
	Known      []bool // Known[i]: Report.Violations[i] is in the baseline
	// SuspectKnown[i]: Suspects[i] is in the baseline.
	SuspectKnown []bool
	Fixed        []BaselineFinding // in the baseline, absent now (Count: how many fewer)
	Growth       []Growth          // leaked and peak live bytes against the baseline
}

// IsNew reports whether violation i counts against the run: not
// suppressed and, under a gate, not in the baseline.
func (o *Outcome) IsNew(i int) bool {
	return o.By[i] == nil && (!o.Gated || !o.Known[i])
}

// Failing lists the indices of the violations that fail the run.
func (o *Outcome) Failing(p *Policy) []int {
	var idx []int
	for i, v := range o.Report.Violations {
		if o.IsNew(i) && p.Fails(v.Kind) {
			idx = append(idx, i)
		}
	}
	return idx
}

// FailCount counts the findings that fail the run, listed or not: the
// violations and, where p fails on them, the new leak suspects.
func (o *Outcome) FailCount(p *Policy) int {
	n := len(o.Failing(p)) + o.failingSuspects(p)
	for k, c := range o.Unlisted {
		if p.Fails(k) {
			n += c
		}
	}
	return n
}

// failingSuspects counts the leak suspects that fail the run.
func (o *Outcome) failingSuspects(p *Policy) int {
	if !p.FailsSuspects() {
		return 0
	}
	return len(o.NewSuspects())
}

// UnlistedCount counts the violations the bound on listed findings left
// out (Max), suppressed or not.
func (o *Outcome) UnlistedCount() int {
	n := o.UnlistedSuppressed
	for _, c := range o.Unlisted {
		n += c
	}
	return n
}

// SuppressedCount counts the suppressed violations.
func (o *Outcome) SuppressedCount() int {
	n := o.UnlistedSuppressed
	for _, r := range o.By {
		if r != nil {
			n++
		}
	}
	return n
}

// IncompleteFails reports whether p fails this file for stopping
// without end (Policy.RequireEnd).
func (o *Outcome) IncompleteFails(p *Policy) bool {
	return o.Err == nil && p.RequireEnd && !o.Report.Complete
}

// Grew lists the metrics that grew beyond the tolerance.
func (o *Outcome) Grew() []Growth {
	var g []Growth
	for _, m := range o.Growth {
		if m.Exceeded() {
			g = append(g, m)
		}
	}
	return g
}

// Status is the verdict on the file under p.
func (o *Outcome) Status(p *Policy) Status {
	switch {
	case o.Err != nil:
		return Unreadable
	case o.FailCount(p) > 0, o.IncompleteFails(p), len(o.Grew()) > 0:
		return Fail
	}
	return Pass
}

// Status is a file's verdict, from best to worst, so that the worst of
// several is their max.
type Status int

const (
	Pass       Status = iota // nothing fails the run
	Fail                     // a finding, a growth or a missing end fails it
	Unreadable               // the input could not be read: nothing was checked
)

func (s Status) String() string {
	switch s {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	}
	return "unreadable"
}

// FailureReasons says, in a few words each, why the file fails; empty when
// it passes.
func (o *Outcome) FailureReasons(p *Policy) []string {
	var why []string
	if o.Err != nil {
		return []string{"unreadable input"}
	}
	sus := o.failingSuspects(p)
	if n := o.FailCount(p) - sus; n > 0 {
		noun := "violation"
		if o.Gated {
			noun = "new finding"
		}
		why = append(why, plural.Count(n, noun))
	}
	if sus > 0 {
		noun := "leak suspect"
		if o.Gated {
			noun = "new leak suspect"
		}
		why = append(why, plural.Count(sus, noun)+" (--fail-on leak-suspect)")
	}
	if o.IncompleteFails(p) {
		why = append(why, "no end event (--require-end)")
	}
	for _, g := range o.Grew() {
		why = append(why, g.Name+" grew")
	}
	return why
}

// RequireEndMessage is the message for a trace that Policy.RequireEnd
// fails, in the words of the command (whose flag is --require-end).
func RequireEndMessage(file string) string {
	return file + ": the trace stops without an end event, and --require-end demands one (the run crashed or was cut off; no leak check ran)"
}
