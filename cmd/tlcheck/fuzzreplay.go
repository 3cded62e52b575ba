package main

import (
	"fmt"
	"os"
	"slices"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/internal/plural"
)

// replayProgram is a calls file read both ways, before any driver starts:
// as a program of layers 2 and 3, and as a layer-5 program. Reading holds
// it to the protocol's bounds (drive.ReadCalls), so that a file no correct
// runtime could answer within them is refused as input, not blamed on the
// driver, and its size costs no more than the bounds.
type replayProgram struct {
	calls            []drive.Call
	tcalls           []drive.TensorCall
	fcalls           []drive.TfjsCall
	errC, errT, errF error
}

func readReplay(path string) (*replayProgram, error) {
	var p replayProgram
	for i := range 3 {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		switch i {
		case 0:
			p.calls, p.errC = drive.ReadCalls(f)
		case 1:
			p.tcalls, p.errT = drive.ReadTensorCalls(f)
		default:
			p.fcalls, p.errF = drive.ReadTfjsCalls(f)
		}
		f.Close()
	}
	if p.errC != nil && p.errT != nil && p.errF != nil {
		return nil, fmt.Errorf("neither a program of layers 2 and 3 (%v), nor of layer 5 (%v), nor a tfjs program (%v)", p.errC, p.errT, p.errF)
	}
	return &p, nil
}

// replayCalls runs a calls file once on the driver: calls of layers 2
// and 3, or of layer 5 for a driver that takes only those; with
// --against, on both drivers, their answers compared (replayAgainst).
func replayCalls(e *env, cfg drive.Config, opts fuzzExecOptions) int {
	prog, err := readReplay(opts.replay)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --replay %s: %v\n", opts.replay, err)
		return exitInput
	}
	if opts.against != "" {
		return replayAgainst(e, prog, opts)
	}
	r, err := drive.NewRunner(cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
		return exitInput
	}
	if r.Hello().Tfjs() {
		return replayTfjs(e, r, prog, opts)
	}
	var res *drive.Result
	var calls int
	if h := r.Hello(); h.Autograd() && !slices.Contains(h.Layers, 2) {
		if err = prog.errT; err == nil {
			calls = len(prog.tcalls)
			res, err = r.RunTensor(prog.tcalls)
		}
	} else if err = prog.errC; err == nil {
		calls = len(prog.calls)
		res, err = r.Run(prog.calls)
	}
	if err != nil { // calls the driver does not take
		r.Close()
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --replay %s: %v\n", opts.replay, err)
		return exitInput
	}
	cerr := r.Close()
	fmt.Fprintf(e.stdout, "%s", res.Listing())
	if cerr != nil { // a driver that misbehaved at the end is a finding, shown with what came before
		fmt.Fprintf(e.stdout, "\nthe driver misbehaved at the end of its input: %v\n", cerr)
		if res.Failure == nil {
			return exitViolation
		}
	}
	if fail := res.Failure; fail != nil {
		fmt.Fprintf(e.stdout, "\n%s at call %d: %s\n", fail.What, fail.Call, fail.Message)
		if fail.Stderr != "" || fail.Trouble() {
			fmt.Fprintf(e.stdout, "%s\n", drive.StderrText(fail.Stderr))
		}
		return exitViolation
	}
	fmt.Fprintf(e.stdout, "\n%s replayed on %s: no failure\n", plural.Count(calls, "call"), describeDriver(r.Hello(), opts.line))
	return replayedTwice(e, cfg, opts, res)
}

// replayAgainst runs a layer-5 calls file once on the driver of --exec and
// the one of --against and compares their answers call by call
// (drive.Compare), each run held to the model: a disagreement is shown
// (exit 1), as a search would show it, unshrunk; one that a departure a
// driver declares explains is said so (exit 0).
func replayAgainst(e *env, prog *replayProgram, opts fuzzExecOptions) int {
	if prog.errT != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --replay %s with --against: the differential compares layer-5 programs: %v\n", opts.replay, prog.errT)
		return exitInput
	}
	against, err := splitWords(opts.against)
	if err == nil && len(against) == 0 {
		err = fmt.Errorf("want the second driver's command line")
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --against %q: %v\n", opts.against, err)
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
	d, dep, err := drive.Compare(runners[0], runners[1], prog.tcalls, drive.DiffOptions{ModelA: true, ModelB: true})
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: --replay %s: %v\n", opts.replay, err)
		return exitInput
	}
	a, b := describeDriver(runners[0].Hello(), opts.line), describeDriver(runners[1].Hello(), opts.against)
	switch {
	case d != nil:
		fmt.Fprintf(e.stdout, "%s", d.Report())
		return exitViolation
	case dep != nil:
		fmt.Fprintf(e.stdout, "%s", dep.Report())
		fmt.Fprintf(e.stdout, "set aside: driver %s declares this departure, %s (%s)\n", dep.Driver, dep.Departure.Name, dep.Departure.Note)
		return exitClean
	}
	fmt.Fprintf(e.stdout, "%s replayed on %s and %s: no disagreement\n", plural.Count(len(prog.tcalls), "call"), a, b)
	return exitClean
}
