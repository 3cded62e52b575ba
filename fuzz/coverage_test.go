//go:build fuzzcoverage

package fuzz

// TestCoverageIsDeterministic holds FuzzProgram's body to what Go's
// coverage-guided fuzzer needs of it: the same input takes the same
// branches, whatever ran before it. It reads the fuzzer's own 8-bit edge
// counters, which exist only in a binary built for fuzzing, so it is
// behind a build tag and runs as
//
//	go test -c -tags fuzzcoverage -fuzz FuzzProgram -ldflags=-checklinkname=0 -o /tmp/fuzz.test ./fuzz
//	(cd fuzz && /tmp/fuzz.test -test.run TestCoverageIsDeterministic)
//
// (-checklinkname=0 lets it name the counters, which internal/fuzz
// keeps). Before Passes kept sessions of its own and the trace reader's
// interner hashed without a random seed, every input failed: 78 counters
// of pools, reused tables and hash order changed from run to run, and the
// fuzzer took each change for new coverage.

import (
	"math/bits"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/tlcheck/tlcheck/impl"
)

//go:linkname fuzzCounters internal/fuzz._counters
var fuzzCounters [0]byte

//go:linkname fuzzCountersEnd internal/fuzz._ecounters
var fuzzCountersEnd [0]byte

// counters are the edge counters of the instrumented code.
func counters() []byte {
	a := unsafe.Pointer(&fuzzCounters)
	return unsafe.Slice((*byte)(a), uintptr(unsafe.Pointer(&fuzzCountersEnd))-uintptr(a))
}

// coverageOf runs check on data from zeroed counters and returns the
// coverage as the fuzzer reads it: each counter rounded down to a power
// of two.
func coverageOf(data []byte, check bodyCheck) []byte {
	c := counters()
	clear(c)
	_ = check(data, impl.Config{})
	snap := make([]byte, len(c))
	copy(snap, c) // copy, not a loop: a loop here would count its own edges
	for i, v := range snap {
		if v != 0 {
			snap[i] = 1 << (bits.Len8(v) - 1)
		}
	}
	return snap
}

func TestCoverageIsDeterministic(t *testing.T) {
	if len(counters()) == 0 {
		t.Skip("not built for fuzzing: see the comment at the top of this file")
	}
	r := rand.New(rand.NewPCG(1, 2))
	inputs := make([][]byte, 300)
	for i := range inputs {
		inputs[i] = make([]byte, r.IntN(maxProgramBytes+64))
		for j := range inputs[i] {
			inputs[i][j] = byte(r.Uint32())
		}
	}
	// The first run of the process is not held: it makes what a process
	// makes once (a cached header line), as a fuzzing worker's first run,
	// of the seed corpus, does before it fuzzes.
	_ = checkProgram(inputs[0], impl.Config{})
	flaky, edges := 0, map[int]bool{}
	for i, in := range inputs {
		first := coverageOf(in, checkProgram)
		// Something else runs in between, as on a fuzzing worker.
		_ = checkProgram(inputs[(i*7+3)%len(inputs)], impl.Config{})
		again := coverageOf(in, checkProgram)
		differ := false
		for k := range first {
			if first[k] != again[k] {
				edges[k], differ = true, true
			}
		}
		if differ {
			flaky++
		}
	}
	if flaky > 0 {
		t.Errorf("%d of %d inputs took other branches when run again (%d edge counters differ)", flaky, len(inputs), len(edges))
	}
}
