package drive

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tfjsDir is examples/tfjsdriver, from drive/.
var tfjsDir = filepath.Join("..", "examples", "tfjsdriver")

// tfjsConfig is the Config of the TensorFlow.js driver with args, or a
// skip where Node.js or the driver's node_modules (npm ci in
// examples/tfjsdriver) is missing.
func tfjsConfig(t testing.TB, args ...string) Config {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on the PATH: install Node.js (20 or later) to run the TensorFlow.js checks")
	}
	if _, err := os.Stat(filepath.Join(tfjsDir, "node_modules", "@tensorflow", "tfjs-core", "package.json")); err != nil {
		t.Skip("examples/tfjsdriver/node_modules is missing: run npm ci in examples/tfjsdriver to run the TensorFlow.js checks")
	}
	cmd := append([]string{node, tfjsDir}, args...)
	return Config{Command: cmd, CallTimeout: 20 * time.Second, StartTimeout: 60 * time.Second}
}

func tfjsRunner(t testing.TB, args ...string) *Runner {
	t.Helper()
	r, err := NewRunner(tfjsConfig(t, args...))
	if err != nil {
		t.Fatalf("starting the tfjs driver: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestTfjsGenerateWellFormed: every generated program is well formed, so
// that a driver is never sent a program it cannot make.
func TestTfjsGenerateWellFormed(t *testing.T) {
	for _, known := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(1, 2))
		ops := map[TfjsOp]bool{}
		for i := range 3000 {
			calls := GenerateTfjsProgram(rng, TfjsGenOptions{Known: known})
			if err := CheckTfjsProgram(calls); err != nil {
				t.Fatalf("known=%v, program %d: %v\n%s", known, i, err, tfjsListing(calls))
			}
			for _, c := range calls {
				ops[c.Op] = true
			}
		}
		for _, op := range TfjsOps {
			if !ops[op] {
				t.Errorf("known=%v: 3000 programs never call %s", known, op)
			}
		}
	}
}

// TestTfjsCheckRefuses: the well-formedness check refuses what a driver
// could not make.
func TestTfjsCheckRefuses(t *testing.T) {
	end := TfjsCall{Op: TfjsEnd}
	t1 := TfjsCall{Op: TfjsTensor, Handle: 1, Shape: []int{2}, Values: []float64{1, 2}}
	for name, calls := range map[string][]TfjsCall{
		"no end":           {t1},
		"never made":       {{Op: TfjsNeg, Handle: 2, A: 1}, end},
		"made twice":       {t1, t1, end},
		"tidy open at end": {{Op: TfjsTidy}, end},
		"tidy_end alone":   {{Op: TfjsTidyEnd, Container: "none"}, end},
		"values":           {{Op: TfjsTensor, Handle: 1, Shape: []int{3}, Values: []float64{1}}, end},
		"shapes":           {t1, {Op: TfjsTensor, Handle: 2, Shape: []int{3}, Values: []float64{1, 2, 3}}, {Op: TfjsAdd, Handle: 3, A: 1, B: 2}, end},
		"not a variable":   {t1, {Op: TfjsAssign, Target: 1, A: 1}, end},
		"end twice":        {end, end},
	} {
		if err := CheckTfjsProgram(calls); err == nil {
			t.Errorf("%s: CheckTfjsProgram took it", name)
		}
	}
}

// TestTfjsRenumber: handles are numbered again in the order made.
func TestTfjsRenumber(t *testing.T) {
	calls := []TfjsCall{
		{Op: TfjsTensor, Handle: 5, Shape: []int{}, Values: []float64{1}},
		{Op: TfjsValueAndGrad, Handles: []int{9, 7}, A: 5, Fn: "sumSquare"},
		{Op: TfjsDispose, Targets: []int{7, 5}, Container: "array"},
		{Op: TfjsEnd},
	}
	got := renumberTfjs(calls)
	want := []TfjsCall{
		{Op: TfjsTensor, Handle: 1, Shape: []int{}, Values: []float64{1}},
		{Op: TfjsValueAndGrad, Handles: []int{2, 3}, A: 1, Fn: "sumSquare"},
		{Op: TfjsDispose, Targets: []int{3, 1}, Container: "array"},
		{Op: TfjsEnd},
	}
	if tfjsListing(got) != tfjsListing(want) {
		t.Errorf("renumbered:\n%s\nwant:\n%s", tfjsListing(got), tfjsListing(want))
	}
}

func tfjsListing(calls []TfjsCall) string {
	var b bytes.Buffer
	WriteTfjsCalls(&b, calls)
	return b.String()
}

// tfjsPrograms is how many programs the clean run makes.
func tfjsPrograms() int {
	if testing.Short() {
		return 300
	}
	return 2000
}

// TestTfjsClean: the real, unpatched tfjs passes generated programs (of
// what it is not known to get wrong: FINDINGS.md).
func TestTfjsClean(t *testing.T) {
	r := tfjsRunner(t)
	n := tfjsPrograms()
	start := time.Now()
	f, ran, err := r.SearchTfjs(Options{Seed: 1, More: func(k int) bool { return k < n }}, TfjsGenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f != nil {
		t.Fatalf("real tfjs failed program %d: %v\n%s", f.Index, f.Result.Failure, tfjsListing(f.Result.Calls))
	}
	took := time.Since(start)
	t.Logf("%d programs clean in %v (%.0f programs/s)", ran, took.Round(time.Millisecond), float64(ran)/took.Seconds())
}

// tfjsFaults are the driver's faults (examples/tfjsdriver/faults.js) and
// what catches each.
var tfjsFaults = []struct {
	name string
	what []string // the failure kinds that may catch it
}{
	{"reshape-no-incref", []string{"premature-free", "double-free", "use-after-free", "refusal", "leak", "memory"}},
	{"tidy-forgets-keep", []string{"premature-free", "use-after-free", "refusal"}},
	{"tidy-leaks-on-throw", []string{"misuse", "leak", "memory"}},
	{"dispose-drops-twice", []string{"premature-free", "double-free", "use-after-free", "refusal"}},
	{"variable-dispose-leaves-buffer", []string{"leak", "memory"}},
	{"variablegrads-leaks-saved", []string{"leak", "memory"}},
	{"adam-dispose-leaves-slots", []string{"memory", "leak"}},
	{"kernel-reads-disposed-input", []string{"premature-free", "use-after-free", "refusal"}},
}

// TestTfjsFaults: each fault patched into tfjs is caught by generated
// programs and shrunk to at most 8 calls.
func TestTfjsFaults(t *testing.T) {
	for _, fault := range tfjsFaults {
		t.Run(fault.name, func(t *testing.T) {
			r := tfjsRunner(t, "--faults="+fault.name)
			f, ran, err := r.SearchTfjs(Options{Seed: 1, More: func(k int) bool { return k < 3000 }}, TfjsGenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if f == nil {
				t.Fatalf("fault %s escaped %d programs", fault.name, ran)
			}
			fl := f.Result.Failure
			if !slicesContains(fault.what, fl.What) {
				t.Errorf("fault %s caught as %v; want one of %v", fault.name, fl, fault.what)
			}
			if len(f.Result.Calls) > 8 {
				t.Errorf("fault %s: shrunk to %d calls, want at most 8:\n%s", fault.name, len(f.Result.Calls), tfjsListing(f.Result.Calls))
			}
			t.Logf("caught at program %d as %s, shrunk from %d to %d calls in %d runs:\n%s", f.Index, fl.What, f.Steps, len(f.Result.Calls), f.Shrinks, tfjsListing(f.Result.Calls))
		})
	}
}

func slicesContains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

// TestTfjsDriverFaultList: the faults the driver has are the faults this
// test catches, so that a fault added to faults.js is held by a test.
func TestTfjsDriverFaultList(t *testing.T) {
	cfg := tfjsConfig(t)
	out, err := exec.Command(cfg.Command[0], cfg.Command[1], "--list-faults").Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range tfjsFaults {
		want = append(want, f.name)
	}
	if got := strings.Fields(string(out)); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the driver's faults are %v; this test catches %v", got, want)
	}
}

// TestTfjsLong is the long search of the real tfjs, run by hand (it is
// skipped unless TLCHECK_TFJS_SEARCH says for how long, as a Go
// duration): searches of ever new seeds from TLCHECK_TFJS_SEED (default
// 1) until the time is up, each finding shrunk and written to
// TLCHECK_TFJS_OUT (default: the test's temporary folder), with
// TLCHECK_TFJS_KNOWN=1 programs that do what tfjs is known to get wrong
// too. It logs the programs run and the findings.
func TestTfjsLong(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("TLCHECK_TFJS_SEARCH"))
	if err != nil {
		t.Skip("set TLCHECK_TFJS_SEARCH to a duration (30m) to search the real tfjs for that long")
	}
	seed := uint64(1)
	if s := os.Getenv("TLCHECK_TFJS_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("TLCHECK_TFJS_SEED: %v", err)
		}
	}
	out := os.Getenv("TLCHECK_TFJS_OUT")
	if out == "" {
		out = t.TempDir()
	}
	gen := TfjsGenOptions{Known: os.Getenv("TLCHECK_TFJS_KNOWN") == "1"}
	r := tfjsRunner(t)
	deadline := time.Now().Add(d)
	total, findings := 0, 0
	for ; time.Now().Before(deadline); seed++ {
		f, n, err := r.SearchTfjs(Options{Seed: seed, More: func(int) bool { return time.Now().Before(deadline) }}, gen)
		total += n
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if f == nil {
			continue
		}
		findings++
		path, err := f.Write(out, fmt.Sprintf("tfjs-seed%d", seed), "node examples/tfjsdriver")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d, program %d: %v\n%s(written to %s)", seed, f.Index, f.Result.Failure, tfjsListing(f.Result.Calls), path)
	}
	t.Logf("TFJS-LONG: %d programs in %v, %d findings (known=%v)", total, d, findings, gen.Known)
}

// TestTfjsKnownDepartures: the departures of real tfjs 4.22.0 from its
// contract that the long search found (examples/tfjsdriver/FINDINGS.md)
// still fail, each as its calls file says. When one passes, tfjs has
// fixed it: move it out of the known ones (TfjsGenOptions.Known, FINDINGS.md).
func TestTfjsKnownDepartures(t *testing.T) {
	r := tfjsRunner(t)
	for _, k := range []struct{ file, what string }{
		{"known-momentum-dispose-leaks", "leak"},
		{"known-variable-dispose-twice", "premature-free"},
		{"known-op-on-disposed-shared", "use-after-free"},
		{"known-op-on-disposed", "use-after-free"},
		{"known-dispose-after-disposevariables", "premature-free"},
		{"known-optimizer-slots-by-position", "refusal"},
	} {
		f, err := os.Open(filepath.Join(tfjsDir, "testdata", k.file+".calls.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		calls, err := ReadTfjsCalls(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", k.file, err)
		}
		res, err := r.RunTfjs(calls)
		if err != nil {
			t.Fatalf("%s: %v", k.file, err)
		}
		switch fl := res.Failure; {
		case fl == nil:
			t.Errorf("%s: real tfjs passes it now: it is no longer a known departure (FINDINGS.md)", k.file)
		case fl.What != k.what:
			t.Errorf("%s: real tfjs fails it as %v; want %s", k.file, fl, k.what)
		default:
			t.Logf("%s: %v", k.file, fl)
		}
	}
}

// TestTfjsParallel: two drivers at once run a clean search of the real
// tfjs, and catch a fault as one driver does.
func TestTfjsParallel(t *testing.T) {
	cfg := tfjsConfig(t)
	n := tfjsPrograms() / 2
	f, ran, err := SearchTfjsParallel(cfg, 2, Options{Seed: 2, More: func(k int) bool { return k < n }}, TfjsGenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f != nil {
		t.Fatalf("real tfjs failed program %d: %v\n%s", f.Index, f.Result.Failure, tfjsListing(f.Result.Calls))
	}
	if ran != n {
		t.Errorf("judged %d programs; want %d", ran, n)
	}
	faulty := tfjsConfig(t, "--faults=tidy-forgets-keep")
	f, _, err = SearchTfjsParallel(faulty, 2, Options{Seed: 1, More: func(k int) bool { return k < 3000 }}, TfjsGenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f == nil || f.Result.Failure.What != "premature-free" || len(f.Result.Calls) > 8 {
		t.Fatalf("tidy-forgets-keep on two drivers: got %+v; want a premature-free in at most 8 calls", f)
	}
	if got := TfjsProgram(1, f.Index, TfjsGenOptions{}); len(got) != f.Steps {
		t.Errorf("program %d of seed 1 has %d calls; the finding was shrunk from %d", f.Index, len(got), f.Steps)
	}
}
