package main

import (
	"fmt"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/internal/plural"
)

// driverName names the two drivers of --against in messages.
var driverName = [2]string{"driver A (--exec)", "driver B (--against)"}

// runFuzzAgainst is fuzz --exec A --against B: the differential check of
// two drivers of layer-5 programs (drive.Diff), the same generated
// programs on both, their answers compared call by call and each run
// held to the model; the first disagreement is shrunk on both, shown and
// written to --out as a calls file that --replay runs on either.
func runFuzzAgainst(e *env, opts fuzzExecOptions) (code int) {
	against, err := splitWords(opts.against)
	if err == nil && len(against) == 0 {
		err = fmt.Errorf("want the second driver's command line")
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --against %q: %v\n", opts.against, err)
		return exitInput
	}
	if err := atomicfile.CheckDir(opts.out); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --out: %v\n", err)
		return exitInput
	}
	var runners [2]*drive.Runner
	for i, cmd := range [][]string{opts.command, against} {
		r, err := drive.NewRunner(opts.config(cmd))
		if err != nil {
			fmt.Fprintf(e.stderr, "tlcheck fuzz: %s: %v\n", driverName[i], err)
			return exitInput
		}
		defer r.Close()
		runners[i] = r
	}
	start := time.Now()
	prog := newProgress(e, start)
	departed := map[string]int{} // "driver A's NAME" -> programs set aside
	var order []string
	d, n, err := drive.Diff(runners[0], runners[1], drive.DiffOptions{Seed: opts.seed, ModelA: true, ModelB: true, More: func(n int) bool {
		prog.update(n)
		return time.Since(start) < opts.time
	}, Departed: func(dep *drive.Departed) {
		key := fmt.Sprintf("driver %s's %s", dep.Driver, dep.Departure.Name)
		if departed[key] == 0 {
			order = append(order, key)
		}
		departed[key]++
	}})
	prog.done()
	elapsed := time.Since(start)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
		return exitViolation
	}
	a, b := describeDriver(runners[0].Hello(), opts.line), describeDriver(runners[1].Hello(), opts.against)
	defer func() { // where a runtime departs from what it stands for: never silently
		for i, r := range runners { // a driver that misbehaves at the end is a finding, after the result
			if cerr := r.Close(); cerr != nil {
				fmt.Fprintf(e.stdout, "tlcheck fuzz: %s misbehaved at the end of its input: %v\n", driverName[i], cerr)
				code = max(code, exitViolation)
			}
		}
		for _, key := range order {
			fmt.Fprintf(e.stdout, "set aside %s, a departure it declares: %s\n", plural.Count(departed[key], "program"), key)
		}
		for i, r := range runners {
			for _, note := range r.Hello().Notes {
				fmt.Fprintf(e.stdout, "driver %c notes: %s\n", 'A'+i, note)
			}
		}
	}()
	if d == nil {
		fmt.Fprintf(e.stdout, "tlcheck fuzz: %s on %s and %s in %s (%s), seed %d: no disagreement\n",
			plural.Count(n, "program"), a, b, elapsed.Round(time.Millisecond), plural.Rate(float64(n)/elapsed.Seconds(), "program"), opts.seed)
		return exitClean
	}
	fmt.Fprintf(e.stdout, "%s", d.Report())
	path, err := d.Write(opts.out, fmt.Sprintf("tlcheck-diff-seed%d", opts.seed), opts.line, opts.against)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
		return exitViolation
	}
	fmt.Fprintf(e.stdout, "calls written to %s\n", path)
	return exitViolation
}
