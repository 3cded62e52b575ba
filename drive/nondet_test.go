package drive_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/drive/impldriver"
	"github.com/tlcheck/tlcheck/impl"
)

// serveNondet is a driver whose answers depend on the programs it ran
// before: impldriver over a correct runtime for its first program, over
// one with fault on for every program after (the shape of a runtime whose
// reset does not start afresh: a heap, a cache, a counter that outlives
// it). With restart, its hello asks to be started for every program, and
// it is then always correct.
func serveNondet(fault string, restart bool) int {
	extra := ""
	if restart {
		extra = `,"restart":true`
	}
	fmt.Printf(`{"protocol":%q,"version":1,"layers":[2],"source":"a driver whose answers depend on earlier programs"%s}`+"\n", drive.ProtocolName, extra)
	in := bufio.NewReader(os.Stdin)
	var feed *io.PipeWriter
	var done sync.WaitGroup
	serve := func(cfg impl.Config) {
		done.Wait() // the runtime before has answered everything
		r, w := io.Pipe()
		feed = w
		done.Add(1)
		go func() {
			defer done.Done()
			out := &afterFirstLine{w: os.Stdout} // its hello is ours, said already
			if err := impldriver.Serve(r, out, cfg); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}()
	}
	resets := 0
	for {
		line, err := in.ReadString('\n')
		if strings.Contains(line, `"op":"reset"`) {
			resets++
			switch resets {
			case 1:
				serve(impl.Config{})
			case 2:
				feed.Close()
				serve(impl.Config{Faults: []impl.Fault{impl.Fault(fault)}})
			}
		}
		if line != "" && feed != nil {
			feed.Write([]byte(line))
		}
		if err != nil {
			break
		}
	}
	if feed != nil {
		feed.Close()
	}
	done.Wait()
	return 0
}

// afterFirstLine writes to w all but the first line written to it.
type afterFirstLine struct {
	w    io.Writer
	past bool
}

func (a *afterFirstLine) Write(p []byte) (int, error) {
	n := len(p)
	if !a.past {
		i := strings.IndexByte(string(p), '\n')
		if i < 0 {
			return n, nil
		}
		a.past, p = true, p[i+1:]
	}
	_, err := a.w.Write(p)
	return n, err
}

// TestNondeterministicDriverReported: a driver whose answers depend on
// the programs before them is found out every time: the finding, run
// again alone in a fresh driver as --replay would run it, does not fail,
// and the finding says the driver is not deterministic, in its failure's
// message too (what drivetest.Test and tlcheck fuzz print).
func TestNondeterministicDriverReported(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		r, err := drive.NewRunner(testDriver("nondet:release-ignores-zero", hangTimeout))
		if err != nil {
			t.Fatal(err)
		}
		found, n, err := r.Search(drive.Options{Seed: seed, More: func(n int) bool { return n < 300 }})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(found) == 0 {
			t.Fatalf("seed %d: the fault after the first program was not caught in %d programs", seed, n)
		}
		f := found[0]
		if f.Reproduced || !strings.Contains(f.Determinism, "not deterministic") ||
			!strings.Contains(f.Failure().Message, "not deterministic") {
			t.Errorf("seed %d: reproduced %v, determinism %q, failure %v; want it reported not deterministic",
				seed, f.Reproduced, f.Determinism, f.Failure())
		}
	}
}

// TestRestartPerProgram: the same driver, asking in its hello to be
// started for every program, meets each program fresh: it runs clean, one
// process a program.
func TestRestartPerProgram(t *testing.T) {
	r, err := drive.NewRunner(testDriver("nondet-restart:release-ignores-zero", hangTimeout))
	if err != nil {
		t.Fatal(err)
	}
	const programs = 40
	found, n, err := r.Search(drive.Options{Seed: 1, More: func(n int) bool { return n < programs }})
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatalf("a restarted driver failed: %v", found[0].Failure())
	}
	if n != programs || r.Starts() != programs {
		t.Errorf("%d programs in %d processes, want %d in as many", n, r.Starts(), programs)
	}
}
