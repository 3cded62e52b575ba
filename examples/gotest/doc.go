// Package gotest is an example of tlcheck used from a Go test, with no
// process started: memory_test.go replays the trace a runtime wrote (here
// a committed one, testdata/train.jsonl) against the reference model and
// gates it against the baseline the team committed
// (testdata/baseline.json), as `tlcheck gate` does, through the library
// alone: packages check (replay, policy, baseline) and report (the human
// report of what fails).
//
// To accept the findings of a changed program, rewrite the baseline with
// the command and review its diff:
//
//	go run ./cmd/tlcheck gate --update --baseline testdata/baseline.json testdata/train.jsonl
//
// (run in this folder, so that the trace's name in the baseline is the
// one the test uses).
package gotest
