package mtrace_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
	"github.com/tlcheck/tlcheck/traces/mtrace"
)

// benchLines is the size of the benchmark log: about 20 MB, far more than
// the CPU's caches hold, as a real log is.
const benchLines = 200_000

// benchLog writes an mtrace log of n lines shaped like CPython's under
// PYTHONMALLOC=malloc. Callers are a few hundred, with paths of varying
// length; addresses have twelve digits, sizes one to five. The program
// runs along a few dozen code paths, each the same run of calls every time
// (as a loop body is), in an order that follows no pattern: varying line
// lengths and operations keep the branch predictor as busy as a real log
// does, where a log of one line repeated would flatter any reader.
func benchLog(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	callers := make([]string, 300)
	for i := range callers {
		fn := []string{"PyUnicode_New", "_PyLong_New", "PyList_Append", "_PyObject_GC_New", "PyMem_RawMalloc"}[i%5]
		switch i % 3 {
		case 0:
			callers[i] = fmt.Sprintf("/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0:(%s+%x)[0x%x]", fn, rng.IntN(0x200), 0x180000+rng.IntN(0x80000))
		case 1:
			callers[i] = fmt.Sprintf("/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0:[0x%x]", 0x180000+rng.IntN(0x80000))
		default:
			callers[i] = fmt.Sprintf("/usr/lib/python3.12/lib-dynload/_json.cpython-312-x86_64-linux-gnu.so:[0x%x]", rng.IntN(0x8000))
		}
	}
	type call struct {
		caller string
		op     byte // '+', '-', or 'r' for a realloc that moves the block
		digits int  // of the size
	}
	paths := make([][]call, 40)
	for i := range paths {
		for range 2 + rng.IntN(8) {
			paths[i] = append(paths[i], call{callers[rng.IntN(len(callers))], "++--r"[rng.IntN(5)], 1 + rng.IntN(5)})
		}
	}
	size := func(digits int) uint64 { return 1<<(4*(digits-1)) + rng.Uint64N(15<<(4*(digits-1))) }
	var live []uint64
	var b bytes.Buffer
	b.WriteString("= Start\n")
	for lines := 1; lines < n; {
		for _, c := range paths[rng.IntN(len(paths))] {
			switch {
			case c.op == '+' || len(live) == 0:
				live = append(live, 0x55b8e5400000+16*rng.Uint64N(1<<20))
				fmt.Fprintf(&b, "@ %s + %#x %#x\n", c.caller, live[len(live)-1], size(c.digits))
				lines++
			case c.op == '-':
				fmt.Fprintf(&b, "@ %s - %#x\n", c.caller, live[len(live)-1])
				live = live[:len(live)-1]
				lines++
			default:
				last := &live[len(live)-1]
				fmt.Fprintf(&b, "@ %s < %#x\n", c.caller, *last)
				*last = 0x7f3a1c000000 + 16*rng.Uint64N(1<<20)
				fmt.Fprintf(&b, "@ %s > %#x %#x\n", c.caller, *last, size(c.digits))
				lines += 2
			}
		}
	}
	return b.Bytes()
}

// BenchmarkReader reads the benchmark log, and beside it, as the baseline
// in the same run, merely splits the same bytes into lines with
// bufio.Scanner. Both report ns/line and MB/s; the reader's ratio to the
// baseline is what to compare across machines.
func BenchmarkReader(b *testing.B) {
	log := benchLog(benchLines)
	lines := bytes.Count(log, []byte("\n"))
	perLine := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(lines), "ns/line")
	}
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(log)))
		for b.Loop() {
			sc := bufio.NewScanner(bytes.NewReader(log))
			n := 0
			for sc.Scan() {
				n++
			}
			if n != lines {
				b.Fatalf("scanned %d lines, want %d", n, lines)
			}
		}
		perLine(b)
	})
	b.Run("mtrace", func(b *testing.B) {
		b.SetBytes(int64(len(log)))
		b.ReportAllocs()
		var ev traces.Event
		for b.Loop() {
			r := mtrace.NewReader(bytes.NewReader(log))
			for {
				err := r.Next(&ev)
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			if r.Pos().Line != 0 || r.Pos().Event != lines-1 {
				b.Fatalf("read %d events, want %d", r.Pos().Event, lines-1) // "= Start" yields none; the end does
			}
		}
		perLine(b)
	})
}
