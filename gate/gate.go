// Package gate holds a run's findings to a committed baseline, as
// tlcheck gate does in CI: the baseline file (package check's Baseline)
// records what a team has accepted, each trace named by check.TraceKey;
// the command checks each trace (check.File), compares its outcome with
// the baseline's entry (Outcome.Compare) and fails only on what the
// baseline does not already hold.
//
// This package owns the baseline file's life around that comparison:
//
//   - Traces refuses two names for one trace: the baseline has one entry
//     per trace, and a trace given twice would count its findings twice.
//   - Load reads the baseline. Without Update it must exist. With Update
//     a missing one is an empty start, and the file to be written must be
//     none of the inputs, writable (atomicfile.CheckReplace) and, if it is
//     there, a baseline: a typo must not replace someone's trace or notes.
//   - Notes says what becomes of the baseline's traces the run was not
//     given: not compared, kept as they were (Update) or removed (Prune).
//   - Update writes the baseline of the run atomically, the traces not
//     given kept, or with Prune removed, and returns what it wrote.
//
// Nothing here checks a trace or writes a report: the caller does.
package gate

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/internal/plural"
	"github.com/tlcheck/tlcheck/internal/safetext"
)

// Options say which baseline a run is held to and what happens to it.
type Options struct {
	Baseline  string          // the baseline file
	Update    bool            // write the baseline from the run
	Prune     bool            // with Update: remove the baseline's traces not given
	Tolerance check.Tolerance // how much leaked and peak bytes may grow
	Inputs    []string        // files besides the traces the baseline must not be (suppressions)
}

// Traces returns an error naming the first two of traces that are one
// trace in the baseline (check.TraceKey: ./a and a).
func Traces(traces []string) error {
	seen := make(map[string]string)
	for _, f := range traces {
		if prev, ok := seen[check.TraceKey(f)]; ok {
			return fmt.Errorf("%s and %s name the same trace", safetext.Clip(prev), safetext.Clip(f))
		}
		seen[check.TraceKey(f)] = f
	}
	return nil
}

// Load reads o.Baseline for a run over traces, as the package comment
// says. Its errors name the file, and with Update say why it is refused.
func Load(o Options, traces []string) (*check.Baseline, error) {
	if o.Update {
		if err := atomicfile.CheckReplace(o.Baseline); err != nil {
			return nil, fmt.Errorf("--update: %w", err)
		}
		for _, in := range append(append([]string(nil), traces...), o.Inputs...) {
			if in != "-" && atomicfile.SameFile(in, o.Baseline) {
				return nil, fmt.Errorf("--update: %s is one of the inputs; the baseline must be a file of its own", o.Baseline)
			}
		}
	}
	b, err := check.ReadBaseline(o.Baseline)
	switch {
	case err == nil:
		return b, nil
	case o.Update && errors.Is(err, fs.ErrNotExist):
		return check.EmptyBaseline(), nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w (run with --update to create it)", err)
	case o.Update:
		return nil, fmt.Errorf("--update: refusing to replace %v", err)
	}
	return nil, err
}

// Notes returns a note for each of base's traces that traces does not
// name, saying what the run does with it.
func Notes(o Options, base *check.Baseline, traces []string) []string {
	given := make(map[string]bool, len(traces))
	for _, t := range traces {
		given[check.TraceKey(t)] = true
	}
	fate := "not compared"
	switch {
	case o.Prune:
		fate = "removed (--prune)"
	case o.Update:
		fate = "kept as it was"
	}
	var notes []string
	for _, t := range base.Traces {
		if !given[t.Trace] {
			notes = append(notes, fmt.Sprintf("the baseline's trace %s was not given: %s", t.Trace, fate))
		}
	}
	return notes
}

// Written is what Update wrote.
type Written struct {
	Baseline *check.Baseline
	NotGiven []check.BaselineTrace // base's traces the run did not give: kept, or with Prune removed
}

// Update writes to o.Baseline (atomically) the baseline of outs over
// base, as Baseline.Update makes it with o.Prune.
func Update(o Options, base *check.Baseline, outs []check.Outcome) (Written, error) {
	nb, notRun := base.Update(outs, o.Prune)
	if err := atomicfile.Replace(o.Baseline, nb.Marshal()); err != nil {
		return Written{}, fmt.Errorf("--update: %w", err)
	}
	return Written{Baseline: nb, NotGiven: notRun}, nil
}

// Messages are the lines that say what w holds (and, with Prune, each
// trace removed), for the command's standard error.
func (w Written) Messages(o Options) []string {
	n := 0
	for i := range w.Baseline.Traces {
		n += w.Baseline.Traces[i].Accepted()
	}
	aside := ""
	if len(w.NotGiven) > 0 && !o.Prune {
		aside = fmt.Sprintf(" (%d not given, kept as it was)", len(w.NotGiven))
	}
	msgs := []string{fmt.Sprintf("wrote %s: %s in %s%s", o.Baseline, plural.Count(n, "finding"), plural.Count(len(w.Baseline.Traces), "trace"), aside)}
	if o.Prune {
		for i := range w.NotGiven {
			msgs = append(msgs, fmt.Sprintf("removed %s from %s (not given; --prune), with its %s",
				safetext.Clip(w.NotGiven[i].Trace), o.Baseline, plural.Count(w.NotGiven[i].Accepted(), "accepted finding")))
		}
	}
	return msgs
}
