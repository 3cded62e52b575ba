// Package fuzz holds tlcheck's native fuzz targets (go test -fuzz). It has
// no API: each target is a test function that feeds generated input to the
// checker's parts and asserts properties that hold for every input, so
// that a crash or a broken invariant becomes a file under testdata/fuzz
// that replays on every later go test.
//
// The targets:
//
//   - FuzzReplay: bytes as a trace (either layout) and as a glibc mtrace
//     log, through the reader and the reference model. Nothing may panic;
//     an input error is an *traces.Error and yields no report; a report
//     counts exactly the events read, lists violations in event order, and
//     (for a log) frees what glibc's mtrace script frees.
//   - FuzzAutogradProgram: bytes as a program of impl/autograd calls (four
//     a step; a partial step left at the end turns checkpoints on), judged
//     by the model, a shadow of the version counters and ClearGrads
//     (properties.RunAutogradBytes).
//   - FuzzPoolProgram: bytes as a program of calls on impl/gpu's caching
//     allocator or persistent pool (pool.Decode, package properties/pool: two header
//     bytes, then four a call), held to the pool property whole
//     (pool.RunBytes).
//   - FuzzNothing and FuzzDecodeOnly, built only with the tag
//     tlcheck_calibrate: calibration, checking nothing: the engine's own
//     rate, and its rate with the input decoded as for a program, beside
//     which reports/benchmarks.md sets FuzzProgram's.
//
// Run a target with, for example:
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzReplay$' -fuzztime 1m
//
// Plain go test runs each target over its seed corpus in testdata/fuzz,
// which holds small inputs of every layer and layout and broken ones.
package fuzz
