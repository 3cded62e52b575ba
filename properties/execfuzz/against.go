package execfuzz

import (
	"fmt"
	"time"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/internal/atomicfile"
	"github.com/tlcheck/tlcheck/internal/plural"
	"github.com/tlcheck/tlcheck/properties/harness"
)

// driverName names the two drivers of --against in messages.
var driverName = [2]string{"driver A (--exec)", "driver B (--against)"}

// againstCommand splits --against into its words; false, said on
// Stderr, for a line that is none.
func againstCommand(opts Options) ([]string, bool) {
	against, err := SplitWords(opts.Against)
	if err == nil && len(against) == 0 {
		err = fmt.Errorf("want the second driver's command line")
	}
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: --against %q: %v\n", opts.Against, err)
		return nil, false
	}
	return against, true
}

// startBoth starts the driver of --exec, then the one of against; false,
// said on Stderr and naming the driver, where one does not start (the
// other closed). The caller closes both.
func startBoth(opts Options, against []string) (runners [2]*drive.Runner, ok bool) {
	for i, cmd := range [][]string{opts.Command, against} {
		r, err := drive.NewRunner(opts.config(cmd))
		if err != nil {
			fmt.Fprintf(opts.Stderr, "tlcheck fuzz: %s: %v\n", driverName[i], err)
			if i == 1 {
				runners[0].Close()
			}
			return runners, false
		}
		runners[i] = r
	}
	return runners, true
}

// runFuzzAgainst is fuzz --exec A --against B: the differential check of
// two drivers of layer-5 programs (drive.Diff), the same generated
// programs on both, their answers compared call by call and each run
// held to the model; the first disagreement is shrunk on both, shown and
// written to --out as a calls file that --replay runs on either.
func runFuzzAgainst(opts Options) (code harness.Outcome) {
	against, ok := againstCommand(opts)
	if !ok {
		return exitInput
	}
	if err := atomicfile.CheckDir(opts.Out); err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: --out: %v\n", err)
		return exitInput
	}
	runners, ok := startBoth(opts, against)
	if !ok {
		return exitInput
	}
	defer runners[0].Close()
	defer runners[1].Close()
	start := time.Now()
	prog := harness.NewProgress(opts.Progress, start)
	departed := map[string]int{} // "driver A's NAME" -> programs set aside
	var order []string
	d, n, err := drive.Diff(runners[0], runners[1], drive.DiffOptions{Seed: opts.Seed, ModelA: true, ModelB: true, More: func(n int) bool {
		prog.Update(n)
		return time.Since(start) < opts.Time
	}, Departed: func(dep *drive.Departed) {
		key := fmt.Sprintf("driver %s's %s", dep.Driver, dep.Departure.Name)
		if departed[key] == 0 {
			order = append(order, key)
		}
		departed[key]++
	}})
	prog.Done()
	elapsed := time.Since(start)
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: %v\n", err)
		return exitViolation
	}
	a, b := describeDriver(runners[0].Hello(), opts.Line), describeDriver(runners[1].Hello(), opts.Against)
	defer func() { // where a runtime departs from what it stands for: never silently
		for i, r := range runners { // a driver that misbehaves at the end is a finding, after the result
			if cerr := r.Close(); cerr != nil {
				fmt.Fprintf(opts.Stdout, "tlcheck fuzz: %s misbehaved at the end of its input: %v\n", driverName[i], cerr)
				code = max(code, exitViolation)
			}
		}
		for _, key := range order {
			fmt.Fprintf(opts.Stdout, "set aside %s, a departure it declares: %s\n", plural.Count(departed[key], "program"), key)
		}
		for i, r := range runners {
			for _, note := range r.Hello().Notes {
				fmt.Fprintf(opts.Stdout, "driver %c notes: %s\n", 'A'+i, note)
			}
		}
	}()
	if d == nil {
		fmt.Fprintf(opts.Stdout, "tlcheck fuzz: %s on %s and %s in %s (%s), seed %d: no disagreement\n",
			plural.Count(n, "program"), a, b, elapsed.Round(time.Millisecond), plural.Rate(float64(n)/elapsed.Seconds(), "program"), opts.Seed)
		return exitClean
	}
	fmt.Fprintf(opts.Stdout, "%s", d.Report())
	path, err := d.Write(opts.Out, fmt.Sprintf("tlcheck-diff-seed%d", opts.Seed), opts.Line, opts.Against)
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: %v\n", err)
		return exitViolation
	}
	fmt.Fprintf(opts.Stdout, "calls written to %s\n", path)
	return exitViolation
}
