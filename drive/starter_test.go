package drive_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/drive"
)

// starterSource is examples/cruntime's starter driver, the template a
// user copies: a driver of a runtime that keeps its books by address, with
// no misuse layer and no quarantine of freed addresses.
var starterSource = filepath.Join("..", "examples", "cruntime", "starter.c")

// misuseOnly are the C runtime's faults that only programs of misuse
// reach: a stale record is a record that outlived its object while
// addresses were handed out again, which needs a release the program did
// not own. A correct program never makes one, and the starter driver,
// whose hello does not ask for misuse, is never sent one.
var misuseOnly = map[string]bool{"stale-record-not-purged": true}

func buildStarter(t testing.TB) string {
	t.Helper()
	starter.Do(func() {
		cc := os.Getenv("CC")
		if cc == "" {
			cc = "gcc"
		}
		if _, err := exec.LookPath(cc); err != nil {
			starter.skip = fmt.Sprintf("no C compiler (%s): %v", cc, err)
			return
		}
		bin := filepath.Join(buildDir, "tlrt-starter")
		out, err := exec.Command(cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-o", bin,
			filepath.Join("..", "examples", "cruntime", "tlrt.c"), starterSource).CombinedOutput()
		if err != nil {
			starter.err = fmt.Sprintf("building the starter driver: %v\n%s", err, out)
			return
		}
		starter.bin = bin
	})
	switch {
	case starter.skip != "":
		t.Skip(starter.skip)
	case starter.err != "":
		t.Fatal(starter.err)
	}
	return starter.bin
}

var starter struct {
	sync.Once
	bin, skip, err string
}

// TestStarterDriver: the starter driver stays under 300 lines, runs clean
// on the correct runtime with the default programs (correct use), and
// catches every fault of the runtime that correct programs can show, u8-count
// (a count kept in a byte) included, within drivetest.Test's budget.
func TestStarterDriver(t *testing.T) {
	src, err := os.ReadFile(starterSource)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(src, []byte("\n")); n >= 300 {
		t.Errorf("starter.c has %d lines, want under 300", n)
	}
	bin := buildStarter(t)
	r, err := drive.NewRunner(drive.Config{Command: []string{bin}, CallTimeout: hangTimeout})
	if err != nil {
		t.Fatal(err)
	}
	found, n, err := r.Search(drive.Options{Seed: 7, More: func(n int) bool { return n < 1000 }})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatalf("the correct runtime failed program %d of %d: %v\n%s", found[0].Index, n, found[0].Failure(), found[0].Result.Listing())
	}
	for _, fault := range cFaults {
		if misuseOnly[fault] {
			continue
		}
		t.Run(fault, func(t *testing.T) {
			r, err := drive.NewRunner(drive.Config{Command: []string{bin, "--faults=" + fault}, CallTimeout: hangTimeout})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			found, n, err := r.Search(drive.Options{Seed: 1, More: func(n int) bool { return n < 200 }, ShrinkTime: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if len(found) == 0 {
				t.Fatalf("not caught in %d programs", n)
			}
			f := found[0]
			t.Logf("caught at program %d, shrunk from %d to %d steps: %v", f.Index, f.Steps, len(f.Program.Steps), f.Failure())
			if !f.Reproduced || f.Determinism != "" {
				t.Errorf("the finding did not reproduce alike in a fresh driver: %s", f.Determinism)
			}
		})
	}
}
