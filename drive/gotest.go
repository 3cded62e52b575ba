package drive

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/properties/flat"
)

// Test is a property test of the runtime behind a driver, for a team's own
// `go test`: it starts command (the driver's program and arguments), runs
// generated programs on it for a few seconds (1000 programs; 200 with
// -short) from a fixed seed, checking each against the model, and fails
// with the first failure, shrunk, its calls listed as a calls file that
// `tlcheck fuzz --exec CMD --replay FILE` runs again. A driver that cannot
// be started fails the test, and so does one that crashes, or hangs on a
// call for 5 s (said on stderr at once, as it is shrunk). The programs use
// the runtime correctly unless the driver's hello asks for misuse (see
// Options.Misuse), and reach counts past 256, deep scopes and reused
// addresses (GenerateProgram). A driver of layer-5 programs alone gets
// autograd programs (see Search); one of tfjs programs gets those
// (SearchTfjs).
//
//	func TestRuntime(t *testing.T) { drive.Test(t, "./myrt-driver") }
func Test(t testing.TB, command ...string) {
	t.Helper()
	r, err := NewRunner(Config{Command: command, CallTimeout: testCallTimeout})
	if err != nil {
		t.Fatal(err)
	}
	programs := 1000
	if testing.Short() {
		programs = 200
	}
	if r.hello.Tfjs() {
		testTfjs(t, r, programs)
		return
	}
	found, _, err := r.Search(Options{Seed: 1, More: func(n int) bool { return n < programs },
		ShrinkTime: 20 * time.Second, Shrinking: func(f *Failure) {
			if f.Trouble() { // a hang or a crash takes a while to shrink: not in silence
				fmt.Fprintf(os.Stderr, "drive.Test: %s: the driver's %s at call %d (%s); shrinking the program (at most 20s)\n",
					t.Name(), f.What, f.Call, f.Message)
			}
		}})
	if cerr := r.Close(); err == nil && len(found) == 0 {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatal(report(found[0]))
	}
}

// Fuzz is a fuzz target over the runtime behind a driver: Go's fuzzing
// engine (its corpus, mutation, minimisation and crashers) drives a
// foreign process. Each input decodes to a program (flat.Decode),
// which runs on one persistent driver per fuzzing worker, checked against
// the model; a failure fails the input with the run's calls listed (the
// engine minimises the input; the driver is started again after a crash).
// Without -fuzz, `go test` runs the seeds: a few generated programs. The
// inputs are programs of layers 2 and 3: a driver of layer-5 programs
// alone is for Test and tlcheck fuzz --exec.
//
//	func FuzzRuntime(f *testing.F) { drive.Fuzz(f, "./myrt-driver") }
func Fuzz(f *testing.F, command ...string) {
	f.Helper()
	for _, seed := range fuzzSeeds() {
		f.Add(seed)
	}
	z := &fuzzer{command: command}
	f.Cleanup(z.close)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := z.run(data); err != nil {
			t.Fatal(err)
		}
	})
}

// fuzzSeeds are Fuzz's seeds: a few generated programs.
func fuzzSeeds() [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	seeds := make([][]byte, 8)
	for i := range seeds {
		seeds[i] = flat.Encode(flat.Generate(rng))
	}
	return seeds
}

// fuzzer runs fuzz inputs on one persistent driver, started at the first
// input. It takes no type of package testing, so that a libFuzzer build,
// which puts go-118-fuzz-build's testing types in their place, can drive
// it too (the C runtime's target in fuzz_cruntime_test.go).
type fuzzer struct {
	command []string
	r       *Runner
}

// run runs the program data decodes to, and returns the finding as an
// error, or an error of the driver's.
func (z *fuzzer) run(data []byte) error {
	if z.r == nil {
		r, err := NewRunner(Config{Command: z.command, CallTimeout: testCallTimeout})
		if err != nil {
			return err
		}
		z.r = r
	}
	_, res, err := z.r.RunProgram(flat.Decode(data))
	if err != nil {
		return err
	}
	if res.Failure != nil {
		return errors.New(report(&Finding{Result: res}))
	}
	return nil
}

func (z *fuzzer) close() {
	if z.r != nil {
		z.r.Close()
	}
}

// testCallTimeout is Test's and Fuzz's call timeout: longer than the
// command's, as test machines are often loaded, and still a bound; a
// hang is shrunk at a tenth of it (Runner.Shrink).
const testCallTimeout = 5 * time.Second

// report writes a finding for a test's failure message.
func report(f *Finding) string {
	var b bytes.Buffer
	fail := f.Failure()
	b.WriteString(fail.Error())
	b.WriteString("\n\n")
	b.WriteString(f.Result.Listing())
	if fail.Stderr != "" || fail.Trouble() {
		b.WriteString("\n" + StderrText(fail.Stderr) + "\n")
	}
	b.WriteString("\nas a calls file (tlcheck fuzz --exec CMD --replay FILE):\n")
	if f.Result.TensorCalls != nil {
		_ = WriteTensorCalls(&b, f.Result.TensorCalls)
	} else {
		_ = WriteCalls(&b, f.Result.Calls)
	}
	return b.String()
}
