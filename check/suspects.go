package check

import (
	"github.com/tlcheck/tlcheck/check/suspect"
	"github.com/tlcheck/tlcheck/input"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/traces"
)

// Leak suspects as findings. A trace without an end (a snapshot taken
// mid-run) gets no leak check; what its loop keeps every iteration is a
// leak suspect (package check/suspect). Under a policy that names
// LeakSuspect in FailOn, a check searches such a trace for suspects, in
// the same replay, and each one counts as a finding: it fails the run
// unless the gate's baseline accepts it, and --update accepts it. Without
// LeakSuspect no search runs, and a baseline's accepted suspects are
// neither compared nor dropped.

// LeakSuspect is the name a leak suspect goes by in --fail-on and in a
// baseline's findings (the rule of report's SARIF). It is no violation
// kind: the model never reports one, and the default policy (every kind)
// does not fail on it.
const LeakSuspect traces.Kind = "leak-suspect"

// FailsSuspects reports whether p searches for leak suspects and fails a
// run on a new one.
func (p *Policy) FailsSuspects() bool { return p.FailOn[LeakSuspect] }

// SuspectFingerprint is a suspect's fingerprint: the kind LeakSuspect
// and the site that keeps the blocks, as AllocSite.
func SuspectFingerprint(s *suspect.Suspect) Fingerprint {
	return Fingerprint{Kind: LeakSuspect, AllocSite: s.Site}
}

// NewSuspects lists the indices of o's suspects that count against the
// run: under a gate, those the baseline does not accept.
func (o *Outcome) NewSuspects() []int {
	var idx []int
	for i := range o.Suspects {
		if !o.Gated || !o.SuspectKnown[i] {
			idx = append(idx, i)
		}
	}
	return idx
}

// SuspectOptions adds to opts what an input gives a search for
// suspects: a snapshot's annotations that start something, and its
// stacks (where it was opened with input.Options.Stacks).
func SuspectOptions(in *input.Input, opts suspect.Options) suspect.Options {
	for _, a := range in.Annotations() {
		if a.Stage == "START" {
			opts.Annotations = append(opts.Annotations, suspect.Annotation{Name: a.Name, T: a.T})
		}
	}
	opts.Stack = func(n int) []suspect.Frame {
		var out []suspect.Frame
		for _, f := range in.Stack(n) {
			out = append(out, suspect.Frame{File: f.File, Line: f.Line, Name: f.Name})
		}
		return out
	}
	return opts
}

// watchSuspects adds a suspect detector to w where p asks for one (a
// snapshot's under ListSuspects, any trace's under FailsSuspects); the
// returned function sets o's suspects once the replay is done (none for
// a trace with an end, whose leaks the model checked).
func watchSuspects(w *model.Watch, in *input.Input, p *Policy) func(o *Outcome) {
	if !p.FailsSuspects() && !(p.ListSuspects && in.Format() == input.TorchSnapshot) {
		return func(*Outcome) {}
	}
	d := suspect.New(SuspectOptions(in, suspect.Options{}))
	event, born, died := w.Event, w.Born, w.Died
	w.Event = func(ev *traces.Event, pos traces.Pos) {
		if event != nil {
			event(ev, pos)
		}
		d.Event(ev, pos)
	}
	w.Born = func(t model.Thing) {
		if born != nil {
			born(t)
		}
		d.Born(t)
	}
	w.Died = func(t model.Thing, n int) {
		if died != nil {
			died(t, n)
		}
		d.Died(t, n)
	}
	return func(o *Outcome) {
		if o.Err != nil || o.Report.Complete {
			return
		}
		o.SuspectsSearched = true
		res, err := d.Result() // an error only for a named marker, and none is
		if err == nil {
			o.Suspects = res.Suspects
		}
	}
}
