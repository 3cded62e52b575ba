// Package model is the reference model of tlcheck: an executable statement
// of what a correct memory runtime must do, checked event by event against
// a trace (see traces/FORMAT.md for the events and violation kinds).
//
//	r, err := traces.NewReader(f)
//	...
//	report, err := model.Replay(r) // err: unreadable input only
//
// [Replay] checks a whole [traces.Source]; a [Checker] does it one event at
// a time ([New], [Checker.Step], [Checker.Close], [Checker.Report]) and
// shows the layer-2 state a runtime must have ([Checker.State]), for
// property tests that drive a runtime and the model side by side;
// [Checker.Reset] readies one for the next trace, as new but for the
// memory it keeps, and [Checker.ReplayFunc] replays a whole Source on a
// Checker the caller keeps. [JudgeRefusal] is the one judge of a
// runtime's refusal of a call against what the model reports there, for
// every harness that drives a runtime beside the model.
//
// A view (a timeline, a profile, a plot) watches the model rather than
// reading the trace again: a [Watch] set on a Checker, or given to
// [ReplayWatched], hears of each thing born and dead, each due free missed
// or freed late, and what is live when the trace closes, as the rules
// decide it ([Thing] is a life as a view sees it). Unwatched, the hooks
// cost a nil check at each birth and death.
//
// # Identity and memory
//
// Everything a trace makes — heap block, managed object, arena buffer,
// device segment, pool block — is a thing, numbered from 1 in the order
// made (Violation.Object). Scope records, params and struct fields name
// things, not addresses, so a reused address cannot fool the model. An
// address resolves through the index (package model/internal/index: a
// sparse page table per address space, a few hash lookups per event) to
// the things remembered there: the live ones, and dead ones until a new
// allocation in the same space takes their range. Memory therefore grows
// with what is alive and with the address ranges in use, never with the
// number of events. A thing remembered, a dead heap block included, costs
// 64 bytes and its share of the page table: about 90 bytes in all on a
// large heap. Nothing is allocated per event but the objects a trace makes
// (other things reuse the memory of forgotten ones) and the first record
// of each site.
//
// Built with the tag naiveindex, the model uses a plain index instead, a
// slice scanned on every query: slow, and the reference the tuned one is
// tested against (both run the model's tests). What the rules say of each
// kind of thing is one row of the table in kinds.go.
//
// # The rules
//
// traces/FORMAT.md is the one statement of what the model does: the
// contract's rules, and under "Decisions" every rule where the contract is
// silent (how an op names a thing, overlap classes, scope exit order,
// effects, the end check, the report's totals). The corpus under
// traces/testdata/corpus pins them, a trace and its verdict per rule, and
// TestCorpus replays it. A change to a rule is a change to FORMAT.md, the
// corpus and the code together. What this page adds is the Go API's side:
//
//   - Step returns a leak found through effects (a missed free) at the
//     first event after the call that made the free due, after the
//     violations of the frees in between; Replay puts violations in event
//     order.
//   - Close ends the trace; frees still due are not claimed, as the
//     contract says, so it returns no violation today.
//   - An event the model cannot take as input at all (a free of a managed
//     object in a trace without effects) is an error, not a violation:
//     Step and Replay return a *traces.Error naming the event, its line and
//     the field.
//   - Report's totals are the end's, zero until end; Report.Complete says
//     whether end was reached.
//   - State shows live objects (not due ones) by address, the newer where
//     two share one; scope records of live objects; every param, even one
//     holding a dead object. Its maps and slices are never nil.
package model
