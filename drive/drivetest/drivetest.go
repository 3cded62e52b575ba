package drivetest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/drive"
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
// drive.Options.Misuse), and reach counts past 256, deep scopes and reused
// addresses (drive.GenerateProgram). A driver of layer-5 programs alone
// gets autograd programs (see drive.Runner.Search); one of tfjs programs
// gets those (drive.Runner.SearchTfjs).
//
//	func TestRuntime(t *testing.T) { drivetest.Test(t, "./myrt-driver") }
func Test(t testing.TB, command ...string) {
	t.Helper()
	r, err := drive.NewRunner(drive.Config{Command: command, CallTimeout: testCallTimeout})
	if err != nil {
		t.Fatal(err)
	}
	programs := 1000
	if testing.Short() {
		programs = 200
	}
	if r.Hello().Tfjs() {
		testTfjs(t, r, programs)
		return
	}
	found, _, err := r.Search(drive.Options{Seed: 1, More: func(n int) bool { return n < programs },
		ShrinkTime: 20 * time.Second, Shrinking: func(f *drive.Failure) {
			if f.Trouble() { // a hang or a crash takes a while to shrink: not in silence
				fmt.Fprintf(os.Stderr, "drivetest.Test: %s: the driver's %s at call %d (%s); shrinking the program (at most 20s)\n",
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
//	func FuzzRuntime(f *testing.F) { drivetest.Fuzz(f, "./myrt-driver") }
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
	r       *drive.Runner
}

// run runs the program data decodes to, and returns the finding as an
// error, or an error of the driver's.
func (z *fuzzer) run(data []byte) error {
	if z.r == nil {
		r, err := drive.NewRunner(drive.Config{Command: z.command, CallTimeout: testCallTimeout})
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
		return errors.New(report(&drive.Finding{Result: res}))
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
// hang is shrunk at a tenth of it (drive.Runner.Shrink).
const testCallTimeout = 5 * time.Second

// report writes a finding for a test's failure message.
func report(f *drive.Finding) string {
	var b bytes.Buffer
	fail := f.Failure()
	b.WriteString(fail.Error())
	b.WriteString("\n\n")
	b.WriteString(f.Result.Listing())
	if fail.Stderr != "" || fail.Trouble() {
		b.WriteString("\n" + drive.StderrText(fail.Stderr) + "\n")
	}
	b.WriteString("\nas a calls file (tlcheck fuzz --exec CMD --replay FILE):\n")
	if f.Result.TensorCalls != nil {
		_ = drive.WriteTensorCalls(&b, f.Result.TensorCalls)
	} else {
		_ = drive.WriteCalls(&b, f.Result.Calls)
	}
	return b.String()
}

// testTfjs is Test for a driver of tfjs programs: programs generated from
// seed 1, the first failure shrunk and shown as a calls file.
func testTfjs(t testing.TB, r *drive.Runner, programs int) {
	t.Helper()
	f, _, err := r.SearchTfjs(drive.Options{Seed: 1, More: func(n int) bool { return n < programs }, ShrinkTime: 20 * time.Second}, drive.TfjsGenOptions{})
	if cerr := r.Close(); err == nil && f == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if f != nil {
		var b strings.Builder
		fl := f.Result.Failure
		b.WriteString(fl.Error() + "\n\nas a calls file (tlcheck fuzz --exec CMD --replay FILE):\n")
		_ = drive.WriteTfjsCalls(&b, f.Result.Calls)
		if fl.Stderr != "" {
			b.WriteString("\nthe driver's last stderr:\n" + fl.Stderr + "\n")
		}
		t.Fatal(b.String())
	}
}
