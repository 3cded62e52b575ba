package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// TestExportNeverPanics exports every saved FuzzReplay input (broken
// traces and logs among them) and random traces full of violations, in
// each format and as both input kinds: the exit code is 0, 1 or 2, never
// the last-resort recovery of a panic, and 2 always comes with a message.
func TestExportNeverPanics(t *testing.T) {
	inputs := map[string]string{}
	paths, _ := filepath.Glob("../../fuzz/testdata/fuzz/FuzzReplay/*")
	if len(paths) < 10 {
		t.Fatalf("found %d saved FuzzReplay inputs; did they move?", len(paths))
	}
	for _, p := range paths {
		data, err := readFuzzInput(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		inputs[filepath.Base(p)] = data
	}
	for seed := range uint64(30) {
		inputs[fmt.Sprint("random-", seed)] = randomTrace(seed)
	}
	checked := 0 // random traces exported in full, violations and all
	for name, data := range inputs {
		for _, from := range []string{"trace", "mtrace"} {
			for _, format := range []string{"perfetto", "pprof", "html", "torch-snapshot"} {
				code, _, stderr := exportCmd(data, "--format", format, "--from", from, "-")
				switch {
				case strings.Contains(stderr, "internal error"):
					t.Errorf("%s, --from %s --format %s: %s", name, from, format, stderr)
				case code < 0 || code > 2:
					t.Errorf("%s, --from %s --format %s: exit %d", name, from, format, code)
				case code == exitInput && stderr == "":
					t.Errorf("%s, --from %s --format %s: exit 2 without a message", name, from, format)
				case code == exitViolation && strings.HasPrefix(name, "random-"):
					checked++
				}
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d random exports got past the reader: the random traces test little", checked)
	}
}

// readFuzzInput reads a saved input of a []byte fuzz target.
func readFuzzInput(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	_, lit, ok := strings.Cut(string(b), "\n")
	lit = strings.TrimSpace(lit)
	if !ok || !strings.HasPrefix(lit, "[]byte(") || !strings.HasSuffix(lit, ")") {
		return "", fmt.Errorf("not a []byte input: %.40q", lit)
	}
	return strconv.Unquote(lit[len("[]byte(") : len(lit)-1])
}

// randomTrace writes a trace of random events, mostly wrong, over a few
// addresses, with times on some.
func randomTrace(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 3))
	var buf bytes.Buffer
	w := traces.NewWriter(&buf, traces.Header{Effects: seed%2 == 0, Source: "random"})
	ops := traces.Ops()
	addr := func() traces.Addr { return traces.Addr(0x1000 + 0x40*rng.IntN(6)) }
	for i := range 100 + rng.IntN(100) {
		ev := traces.Event{Op: ops[rng.IntN(len(ops))], Addr: addr(), NewAddr: addr(),
			Size: uint64(rng.IntN(300)), HasSize: true, Name: "p", Slots: 3, Slot: rng.IntN(3),
			Site: fmt.Sprintf("<r%d>.tl:%d", i%5, i)}
		if ev.Op == traces.OpStructInit {
			ev.Fields = []traces.Addr{addr()}
		}
		if ev.Op == traces.OpFree && seed%2 == 1 || ev.Op == traces.OpRealloc {
			continue // without effects, a free of an object is an input error
		}
		if rng.IntN(2) == 0 {
			ev.T = int64(i) * 1500
		}
		if err := w.Write(&ev); err != nil {
			panic(err) // the test's own events: a bug here
		}
	}
	w.Flush()
	return buf.String()
}
