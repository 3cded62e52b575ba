// Package suspect names leak suspects in a trace without an end: a
// snapshot taken mid-run, where no leak check can run because everything
// still live may yet be freed. A training loop is periodic, and what it
// keeps iteration after iteration is the leak users hunt (each step's
// loss kept in a list, each evaluation step's output kept with its whole
// graph).
//
//	res, err := suspect.Find(src, suspect.Options{})   // or Options{Iteration: "train.py:31"}
//	for _, s := range res.Suspects { ... }             // s.Site, s.BytesPerIteration, s.Evidence
//
// The contract:
//
//   - The period is detected from the allocations' sites (see detect in
//     period.go): the marker is a site made once an iteration, at a
//     steady gap, at which the sequence of sites repeats as well as at
//     any gap. Options.Iteration names the marker site instead, and
//     Options.IterationAnnotation an annotation (a snapshot's
//     external_annotations: "Optimizer.step") whose instants start the
//     iterations. Where no site is found and none is named, the
//     annotation that recurs most marks them; failing that, the Result
//     says why and names no suspect.
//   - The last iteration seen is taken to be in progress. A site is a
//     suspect when its blocks still live were made in every complete
//     iteration from some iteration on, over MinIterations (3) at least,
//     three quarters of them keeping the same number of blocks. What a
//     loop makes once (an optimizer's state) and what the next iteration
//     frees (the previous input or loss) is never one.
//   - A Suspect says how sure it is: the iterations seen, the steadiness
//     and a word (high, medium, low), with the first and last kept blocks
//     as evidence (the events that made them) and, where Options.Stack
//     gives stacks (a snapshot's Python frames), the first one's stack.
//   - Result, Suspect and Block are plain values with JSON tags: the
//     shape that report's writers show; Result.Page converts the
//     suspects to the HTML page's (export.PageSuspect).
//   - It is fed by the model (model.Watch's Born and Died), never by a
//     reading of ops of its own, and counts blocks, objects and pool
//     blocks, not device segments or arena buffers. Its memory is the
//     live blocks, each site's count and run-length-coded gaps (bounded),
//     and the sites of the first 2^18 allocations.
//
// A suspect is a suspicion, not a violation: a bounded history (the last
// ten losses) looks the same until the trace outlasts it.
package suspect
