package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/impl"
	"github.com/tlcheck/tlcheck/impl/lang"
	"github.com/tlcheck/tlcheck/impl/registry/lincheck"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/properties"
)

const selftestUsage = `usage: tlcheck selftest [--json] [--report PATH] [--time D] [--seed N]

Hunts every fault of the runtime's catalog ('tlcheck faults'): with the
fault switched on alone, generated programs run against the runtime, with
the reference model as oracle, until one fails or --time passes; the
failing program is shrunk. A runtime fault is hunted with programs of
runtime calls (the slot planner's and the arena's with source programs
too, whose catch is noted); a codegen fault with source programs (package impl/lang),
lowered to runtime calls, with the interpreter as a second oracle, and its
shrunk source program goes into the report. The GPU pool's faults
(impl/gpu) are hunted by the pool property, whose programs drive the
allocators. The registry's faults (impl/registry) are hunted by concurrent
histories checked for linearizability against a sequential model
(porcupine), until one is not linearizable. The autograd faults
(impl/autograd) are hunted by generated autograd programs on an engine
built over the runtime, with the model, a shadow of the version counters
and ClearGrads as oracles, and their shrunk programs go into the report.
Prints, per fault, whether it was caught, the seconds to a counterexample
and its length (trace events, or calls in the history). Then the correct
runtime (with flat and source programs), the correct allocators, the
correct registry and the correct autograd engine run as controls for the
same time (at most 1s each): they must not fail.

  --json         print {"faults":[{"name":..,"caught":..,"seconds":..,"events":..}]}
  --report PATH  also write the results as Markdown to PATH (atomically);
                 default: reports/detection.md if the current directory has
                 a reports directory (the repository root), else no report;
                 --report "" writes none
  --time D       the budget per fault, as a Go duration (default 10s)
  --seed N       the seed of the programs (default 1)

Exit status: 0 every fault caught and the control clean, 1 a fault escaped
or the control failed, 2 bad usage or the report could not be written.
`

// defaultReport is where selftest writes its report when run from the
// repository root, the directory that has reports/.
const defaultReport = "reports/detection.md"

// huntResult is one fault's line of the selftest, in the JSON shape of
// selftest --json; the unexported fields go to the human forms only.
type huntResult struct {
	Name    string  `json:"name"`
	Caught  bool    `json:"caught"`
	Seconds float64 `json:"seconds"` // to a shrunk counterexample: search and shrink
	Events  int     `json:"events"`  // the shrunk trace's length; 0 if not caught
	// Also names the other engines that caught it too (impl.FaultInfo.Also).
	Also       []string `json:"also,omitempty"`
	property   string
	programs   int    // programs run; for a registry fault, histories checked
	source     string // a codegen fault's shrunk source program, or a runtime fault's caught by source programs too
	statements int    // the shrunk source program's statements
	alsoProp   string // the property source programs broke, for a runtime fault
	// An autograd fault's shrunk program and its steps.
	autogradProgram string
	steps           int
	// The registry's control: histories checked and their seconds.
	histories   int
	histSeconds float64
	pool        int // the control only: pool programs the correct allocators ran
	autograd    int // the control only: autograd programs the correct engine ran
}

// hunters holds, for each engine of impl.Catalog (FaultInfo.Engine), how
// selftest hunts one of its faults; a test fails, naming the engine, for
// one missing here.
var hunters = map[string]func(f impl.FaultInfo, opts selftestOptions) huntResult{
	impl.EngineProgram: func(f impl.FaultInfo, opts selftestOptions) huntResult {
		return hunt(impl.Config{Faults: []impl.Fault{f.Name}}, string(f.Name), opts)
	},
	impl.EngineSource: func(f impl.FaultInfo, opts selftestOptions) huntResult {
		return huntSource(impl.Config{Faults: []impl.Fault{f.Name}}, string(f.Name), opts)
	},
	impl.EngineRegistry: func(f impl.FaultInfo, opts selftestOptions) huntResult {
		return huntRegistry([]impl.Fault{f.Name}, string(f.Name), opts)
	},
	impl.EnginePool: func(f impl.FaultInfo, opts selftestOptions) huntResult {
		return huntPool([]impl.Fault{f.Name}, string(f.Name), opts)
	},
	impl.EngineAutograd: func(f impl.FaultInfo, opts selftestOptions) huntResult {
		return huntAutograd([]impl.Fault{f.Name}, string(f.Name), opts)
	},
}

// huntFault hunts f with its engine's hunter; a fault no hunter takes is
// reported not caught, and says so.
func huntFault(f impl.FaultInfo, opts selftestOptions) huntResult {
	h, ok := hunters[f.Engine]
	if !ok {
		return huntResult{Name: string(f.Name), property: "no engine hunts " + f.Engine + " faults"}
	}
	r := h(f, opts)
	if f.Engine != impl.EngineSource && f.CaughtBy(impl.EngineSource) {
		// Source programs reach it too: say so when they catch it.
		if sr := huntSource(impl.Config{Faults: []impl.Fault{f.Name}}, string(f.Name), opts); sr.Caught {
			r.Also, r.source, r.statements, r.alsoProp = append(r.Also, impl.EngineSource), sr.source, sr.statements, sr.property
		}
	}
	return r
}

type selftestOptions struct {
	json   bool
	report string
	time   time.Duration
	seed   uint64
}

func runSelftest(e *env, args []string) int {
	opts, err := parseSelftestArgs(args)
	if code, ok := badFlags(e, "selftest", selftestUsage, err); !ok {
		return code
	}

	var results []huntResult
	for _, f := range impl.Catalog() {
		results = append(results, huntFault(f, opts))
	}
	controlOpts := selftestOptions{seed: opts.seed, time: min(opts.time, time.Second)}
	half := selftestOptions{seed: opts.seed, time: controlOpts.time / 2}
	control := hunt(impl.Config{}, "none", half)
	if sc := huntSource(impl.Config{}, "none", half); sc.Caught && !control.Caught {
		control = sc
	} else if !control.Caught {
		control.programs += sc.programs
		control.Seconds += sc.Seconds
	}
	if rc := huntRegistry(nil, "none", controlOpts); rc.Caught {
		control.Caught, control.property = true, rc.property
	} else {
		control.histories, control.histSeconds = rc.programs, rc.Seconds
	}
	if pc := huntPool(nil, "none", controlOpts); pc.Caught && !control.Caught {
		control.Caught, control.property = true, pc.property
		fmt.Fprintf(e.stderr, "tlcheck selftest: the correct GPU allocators failed %s\n", pc.property)
	} else {
		control.pool = pc.programs
	}
	if ac := huntAutograd(nil, "none", controlOpts); ac.Caught && !control.Caught {
		control.Caught, control.property = true, ac.property
		fmt.Fprintf(e.stderr, "tlcheck selftest: the correct autograd engine failed %s\n", ac.property)
	} else {
		control.autograd = ac.programs
	}

	if opts.json {
		if err := writeSelftestJSON(e.stdout, results); err != nil {
			fmt.Fprintf(e.stderr, "tlcheck selftest: %v\n", err)
			return exitInput
		}
	} else {
		writeSelftestTable(e.stdout, results, control)
	}
	if opts.report != "" {
		if err := atomicfile.Replace(opts.report, selftestMarkdown(results, control, opts)); err != nil {
			fmt.Fprintf(e.stderr, "tlcheck selftest: writing the report: %v\n", err)
			return exitInput
		}
		if !opts.json {
			fmt.Fprintf(e.stdout, "wrote %s\n", opts.report)
		}
	}
	if control.Caught {
		fmt.Fprintf(e.stderr, "tlcheck selftest: the correct runtime failed %s: run tlcheck fuzz --seed %d to see it\n",
			control.property, opts.seed)
		return exitViolation
	}
	for _, r := range results {
		if !r.Caught {
			return exitViolation
		}
	}
	return exitClean
}

func parseSelftestArgs(args []string) (selftestOptions, error) {
	opts := selftestOptions{}
	fs := flag.NewFlagSet("selftest", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&opts.json, "json", false, "")
	fs.StringVar(&opts.report, "report", "", "")
	fs.DurationVar(&opts.time, "time", 10*time.Second, "")
	fs.Uint64Var(&opts.seed, "seed", 1, "")
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if opts.time <= 0 {
		return opts, fmt.Errorf("--time %v: want a positive duration", opts.time)
	}
	reportSet := false
	fs.Visit(func(f *flag.Flag) { reportSet = reportSet || f.Name == "report" })
	if !reportSet {
		if st, err := os.Stat(filepath.Dir(defaultReport)); err == nil && st.IsDir() {
			opts.report = defaultReport
		}
	}
	return opts, nil
}

// hunt searches for a program that fails against cfg within opts.time and
// shrinks it. Caught means a property broke.
func hunt(cfg impl.Config, name string, opts selftestOptions) huntResult {
	start := time.Now()
	p, f, n := properties.Search(cfg, opts.seed, func(int) bool { return time.Since(start) < opts.time })
	r := huntResult{Name: name, programs: n}
	if f != nil {
		small, sf := properties.Shrink(p, cfg)
		r.Events, r.property = sf.Events(), brokenList(sf)
		// Caught means caught for the fault's sake: the counterexample
		// must pass on the runtime without it.
		correct := cfg
		correct.Faults = nil
		_, g := properties.Run(small, correct)
		r.Caught = g == nil || len(cfg.Faults) == 0
	}
	r.Seconds = time.Since(start).Seconds()
	return r
}

// huntRegistry runs concurrent histories of impl/registry with faults on
// until one is not linearizable or opts.time passes, then searches smaller
// workloads for a shorter one. Caught means a history was not
// linearizable; with no fault, that is the control failing. A concurrent
// history cannot be replayed as a program can, so the control (the same
// seeds on the correct registry) is what shows the fault is to blame.
func huntRegistry(faults []impl.Fault, name string, opts selftestOptions) huntResult {
	start := time.Now()
	cfg := lincheck.Config{Seed: opts.seed, Faults: faults}
	res, n, err := lincheck.Hunt(cfg, func(int) bool { return time.Since(start) < opts.time })
	r := huntResult{Name: name, programs: n}
	switch {
	case err != nil:
		r.property = err.Error()
	case res.Verdict == lincheck.Illegal:
		if len(faults) > 0 {
			res = lincheck.Shrink(cfg, res, 20)
		}
		r.Caught, r.Events, r.property = true, len(res.History), "Linearizable"
	}
	r.Seconds = time.Since(start).Seconds()
	return r
}

// huntPool is hunt for the pool's faults: generated pool programs run
// against the allocators of impl/gpu with faults on, checked by the pool
// property (books recounted after every call, trace replayed by the model).
func huntPool(faults []impl.Fault, name string, opts selftestOptions) huntResult {
	start := time.Now()
	p, f, n := properties.SearchPool(faults, opts.seed, func(int) bool { return time.Since(start) < opts.time })
	r := huntResult{Name: name, programs: n}
	if f != nil {
		small, sf := properties.ShrinkPool(p, faults)
		r.Events, r.property = sf.Events(), sf.Property
		r.Caught = properties.RunPool(small, nil) == nil || len(faults) == 0
	}
	r.Seconds = time.Since(start).Seconds()
	return r
}

// huntAutograd is hunt for the autograd faults: generated autograd
// programs run on an impl/autograd engine over a runtime with faults on,
// checked by the autograd property (the model, a shadow of the version
// counters, ClearGrads, no misuse of the runtime); the failing program is
// shrunk, and caught means the shrunk one passes without the faults.
func huntAutograd(faults []impl.Fault, name string, opts selftestOptions) huntResult {
	start := time.Now()
	p, f, n := properties.SearchAutograd(faults, opts.seed, func(int) bool { return time.Since(start) < opts.time })
	r := huntResult{Name: name, programs: n}
	if f != nil {
		small, sf := properties.ShrinkAutograd(p, faults)
		if sf == nil { // a failure that does not come back: report the unshrunk one
			small, sf = p, f
		}
		r.Events, r.property, r.steps = sf.Events(), sf.Property, small.Len()
		if sf.Kind != "" {
			r.property += " (" + string(sf.Kind) + ")"
		}
		r.autogradProgram = small.String()
		r.Caught = properties.RunAutograd(small, nil) == nil || len(faults) == 0
	}
	r.Seconds = time.Since(start).Seconds()
	return r
}

// huntSource is hunt with source programs: a codegen fault shows only in
// the code a compiler emits.
func huntSource(cfg impl.Config, name string, opts selftestOptions) huntResult {
	start := time.Now()
	p, f, n := properties.SearchSource(cfg, opts.seed, func(int) bool { return time.Since(start) < opts.time })
	r := huntResult{Name: name, programs: n}
	if f != nil {
		small, sf := properties.ShrinkSource(p, cfg)
		if sf == nil { // a failure that does not come back: report the unshrunk one
			small, sf = p, f
		}
		r.Events, r.property, r.source, r.statements = sf.Events(), sf.Property, small.String(), lang.Statements(small)
		correct := cfg
		correct.Faults = nil
		g, err := properties.RunSource(small, correct)
		r.Caught = err == nil && g == nil || len(cfg.Faults) == 0
	}
	r.Seconds = time.Since(start).Seconds()
	return r
}

// brokenList names the properties a failure broke, the first one first.
func brokenList(f *properties.Failure) string {
	names := []string{f.Property}
	for _, p := range f.Broken {
		if p != f.Property {
			names = append(names, p)
		}
	}
	return strings.Join(names, ", ")
}

func writeSelftestJSON(w io.Writer, results []huntResult) error {
	for i := range results {
		results[i].Seconds = float64(int64(results[i].Seconds*1e6+0.5)) / 1e6 // µs: a pool hunt can take less than 1 ms
	}
	return json.NewEncoder(w).Encode(struct {
		Faults []huntResult `json:"faults"`
	}{results})
}

func writeSelftestTable(w io.Writer, results []huntResult, control huntResult) {
	width := 32 // the names' column: the longest name's
	for _, r := range results {
		width = max(width, len(r.Name))
	}
	fmt.Fprintf(w, "%-*s %-6s %8s %6s  %s\n", width, "fault", "caught", "seconds", "events", "properties (first to break first)")
	for _, r := range results {
		caught, prop := "yes", r.property+alsoNote(r)
		if !r.Caught {
			caught, prop = "NO", "-"
		}
		fmt.Fprintf(w, "%-*s %-6s %8.3f %6d  %s\n", width, r.Name, caught, r.Seconds, r.Events, prop)
	}
	fmt.Fprintln(w, summary(results, control))
}

// alsoNote says which other engines caught a fault too, and how small
// their counterexample shrank: "" for most faults.
func alsoNote(r huntResult) string {
	if len(r.Also) == 0 {
		return ""
	}
	return fmt.Sprintf(" (also caught by %s programs, shrunk to %d statements)", strings.Join(r.Also, ", "), r.statements)
}

// summary is the closing line: faults caught, median and slowest time, and
// the control.
func summary(results []huntResult, control huntResult) string {
	caught := 0
	var secs []float64
	for _, r := range results {
		if r.Caught {
			caught++
			secs = append(secs, r.Seconds)
		}
	}
	s := fmt.Sprintf("%d of %d faults caught", caught, len(results))
	if len(secs) > 0 {
		slices.Sort(secs)
		s += fmt.Sprintf("; median %.3f s, slowest %.3f s", median(secs), secs[len(secs)-1])
	}
	if control.Caught {
		return s + fmt.Sprintf("; the correct runtime FAILED (%s)", control.property)
	}
	if control.pool > 0 {
		s += fmt.Sprintf("; the correct GPU allocators ran %d pool programs", control.pool)
	}
	if control.autograd > 0 {
		s += fmt.Sprintf("; the correct autograd engine ran %d autograd programs", control.autograd)
	}
	return s + fmt.Sprintf("; the correct runtime ran %d programs in %.1f s and the correct registry %d histories in %.1f s with no failure",
		control.programs, control.Seconds, control.histories, control.histSeconds)
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// detectionIntro opens reports/detection.md; its verbs are the seed and
// the budget per fault.
const detectionIntro = `# Fault detection

Generated by ` + "`tlcheck selftest`" + ` from the repository root; do not edit by hand.

Each fault of the runtime's catalog (` + "`tlcheck faults`" + `) is switched on alone.
Programs generated from seed %d run against the runtime, with the reference
model as oracle, until one breaks a property or %v pass; that program is then
shrunk. A fault counts as caught only if the shrunk program passes on the
runtime without the fault. *Seconds* is the time to the shrunk counterexample
(search and shrink); *events* is the length of its trace, the file that
` + "`tlcheck replay`" + ` rejects; *properties* are those it breaks, the first to break
first; *programs* is how many ran before one failed. The GPU pool's faults
(engine ` + "`pool`" + `) are hunted by the pool property instead, whose programs
drive the allocators of impl/gpu: its properties are the allocator's books
recounted after every call (*Tiling*, *Merged*, *Stats*, *Reserved*, *Live*,
*NoFalseOOM*, *Reuse*, *Guard*, *PoolStats*) and *Model*, the recorded trace
replayed by the model.

The autograd faults (engine ` + "`autograd`" + `, impl/autograd) are hunted by autograd
programs: tensor ops, in-place ops, backward, detach, scopes and ClearGrads on
an autograd engine over the runtime, checked by the autograd property
(*Model*, the trace replayed by the model; *Versions*, a shadow of the version
counters; *ClearGrads*; *RuntimeUse*, no misuse of the runtime); the failing
program is shrunk step by step, and its steps are listed at the end.

The registry's faults (` + "`registry-*`" + `, impl/registry) are hunted by another
engine: 8 goroutines make 24 random calls each on one registry at once, and
porcupine checks the history for linearizability against a sequential model
of the registry, history after history, until one is not linearizable; then
smaller workloads (fewer goroutines, fewer calls) are searched for a shorter
one. For them *events* is the calls in that shortest history, *properties* is
Linearizable, and *programs* the histories checked before the first failure.
A concurrent history cannot be replayed, so the correct registry, run on the
same seeds as a control, must stay linearizable.

| fault | caught | seconds | events | properties | programs |
|---|---|---:|---:|---|---:|
`

// selftestMarkdown renders the selftest as reports/detection.md.
func selftestMarkdown(results []huntResult, control huntResult, opts selftestOptions) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, detectionIntro, opts.seed, opts.time)
	for _, r := range results {
		caught, prop := "yes", r.property+alsoNote(r)
		if !r.Caught {
			caught, prop = "**no**", "-"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %.3f | %d | %s | %d |\n", r.Name, caught, r.Seconds, r.Events, prop, r.programs)
	}
	fmt.Fprintf(&b, "\n%s.\n\n", summary(results, control))
	heading := false
	for _, r := range results {
		if r.source == "" {
			continue
		}
		if !heading {
			b.WriteString("## Shrunk source programs\n\nOf the codegen faults, and of the runtime faults that source programs catch too.\n\n")
			heading = true
		}
		prop := r.property
		if len(r.Also) > 0 {
			prop = r.alsoProp
		}
		fmt.Fprintf(&b, "`%s` (%s):\n\n```\n%s```\n\n", r.Name, prop, r.source)
	}
	first := true
	for _, r := range results {
		if r.autogradProgram == "" {
			continue
		}
		if first {
			b.WriteString("## Shrunk programs of the autograd faults\n\n")
			b.WriteString("One step a line: the op, its two operands (indices into the tensors made so far) and its constant.\n\n")
			first = false
		}
		fmt.Fprintf(&b, "`%s` (%s, %d steps, %d events):\n\n```\n%s```\n\n", r.Name, r.property, r.steps, r.Events, r.autogradProgram)
	}
	fmt.Fprintf(&b, "Measured on %s/%s, %d CPUs, %s.\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
	return b.Bytes()
}
