// Package readertest holds what the tests of the trace readers (traces,
// traces/mtrace, traces/torchsnap) share to show that a reader's memory
// does not grow with its input: inputs far larger than anything the test
// holds, streamed (Repeat, Concat), and the cost of reading one
// (Measure). It is for tests only, as testing/iotest is.
package readertest

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"
)

// Repeat returns a reader of s written n times, which it streams from a
// buffer of about 64 KiB: a test reads a 64 MB line without holding it.
func Repeat(s string, n int) io.Reader {
	if s == "" {
		return strings.NewReader("")
	}
	return &repeat{b: []byte(strings.Repeat(s, max(1, (64<<10)/len(s)))), n: n * len(s)}
}

// repeat reads its buffer round, n bytes in all, from i.
type repeat struct {
	b    []byte
	n, i int
}

func (r *repeat) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && r.n > 0 {
		c := copy(p[k:min(len(p), k+r.n)], r.b[r.i:])
		k += c
		r.n -= c
		r.i = (r.i + c) % len(r.b)
	}
	return k, nil
}

// Concat returns its parts one after the other, each a string or an
// io.Reader (a Repeat). Another type is a mistake in the test, which
// Concat panics on, naming it.
func Concat(parts ...any) io.Reader {
	rs := make([]io.Reader, len(parts))
	for i, p := range parts {
		switch p := p.(type) {
		case string:
			rs[i] = strings.NewReader(p)
		case io.Reader:
			rs[i] = p
		default:
			panic(fmt.Sprintf("readertest.Concat: part %d is a %T, want a string or an io.Reader", i, p))
		}
	}
	return io.MultiReader(rs...)
}

// Cost is what a read cost: the bytes it allocated (all of them, freed or
// not: runtime.MemStats.TotalAlloc) and the time it took.
type Cost struct {
	Alloc uint64
	Took  time.Duration
}

// Measure runs read, after a garbage collection, and returns its cost.
// The other goroutines' allocations count too: run it in a test that is
// not parallel.
func Measure(read func()) Cost {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	read()
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	return Cost{Alloc: after.TotalAlloc - before.TotalAlloc, Took: took}
}
