// Package check decides what a trace's findings mean for a run: it replays
// a trace against the reference model (package model) and returns the
// outcome under a policy, and, for a gate, compares the outcome with a
// committed baseline.
//
//	p := &check.Policy{}                                    // every kind fails
//	o := check.File("train.jsonl", input.Options{}, p, 0)   // replay, list every finding
//	b, err := check.ReadBaseline("tlcheck-baseline.json")
//	...
//	o.Compare(b.Find(check.TraceKey("train.jsonl")), check.Tolerance{})
//	if o.Status(p) != check.Pass { ... }                    // report.File renders why
//
// The contract:
//
//   - The check returns a value. An Outcome is the model's report, each
//     listed violation's suppression (By), what a bound on listed findings
//     left out (counted by kind), the leaks summed by allocation site and,
//     under a gate, which findings the baseline accepts (Known), which it
//     accepts and are gone (Fixed) and how the totals moved (Growth).
//     Nothing here writes a report or exits: package report renders an
//     Outcome, and a command turns Status into an exit code.
//   - A Policy says what fails: the kinds in FailOn (all, when empty), a
//     trace without end under RequireEnd, and nothing a suppression Rule
//     matches. Suppressed findings are never dropped, only marked.
//   - Memory stays bounded however much a trace reports: Source and File
//     list at most max violations and count the rest.
//   - Suppressions cost a finding about what a few rules do however many
//     a file holds: the rules are indexed by kind and by the text their
//     patterns fix (suppress_index.go), never scanned finding by finding.
//   - A finding is matched to the baseline by its Fingerprint (kind, site,
//     allocation site), never by event numbers, lines or addresses, and
//     counted per trace. Baseline files are read strictly (an unknown
//     field, kind or a repeated finding is an error naming it) and written
//     sorted and indented, so that a change reads well in a diff.
//   - Leak suspects (package check/suspect) are findings only where
//     FailOn names LeakSuspect: File then searches a trace without an
//     end for them in the same replay (Outcome.Suspects); each fails the
//     run unless the baseline accepts its fingerprint (LeakSuspect, the
//     site that keeps the blocks). A baseline's suspects are neither
//     compared nor dropped by a run that did not search (suspects.go).
//     FindSuspects is the search alone (tlcheck suspects), and PageWatch
//     the one an HTML export's replay runs for its page (pagewatch.go).
//   - Every error from a file names the file (and, for a suppression file,
//     the line).
//
// This package imports the model and the trace readers, never a runtime.
package check
