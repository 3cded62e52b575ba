package execfuzz

import (
	"fmt"
	"os"
	"slices"

	"github.com/tlcheck/tlcheck/drive"
	"github.com/tlcheck/tlcheck/internal/plural"
	"github.com/tlcheck/tlcheck/properties/harness"
)

// replayedTwice follows a --replay that gave no failure: the same calls
// run twice in one fresh driver must get the same answers, addresses
// included (PROTOCOL.md, Determinism). A calls file that failed in the
// search and not here is the usual sign of a driver that is not
// deterministic, and that is said, with where the answers differ; a
// driver that is not is a finding (exit 1).
func replayedTwice(cfg drive.Config, opts Options, first *drive.Result) harness.Outcome {
	r, err := drive.NewRunner(cfg)
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: %v\n", err)
		return exitInput
	}
	defer r.Close()
	var runs [2]*drive.Result
	for i := range runs {
		if first.TensorCalls != nil {
			runs[i], err = r.RunTensor(first.TensorCalls)
		} else {
			runs[i], err = r.Run(first.Calls)
		}
		if err != nil {
			fmt.Fprintf(opts.Stderr, "tlcheck fuzz: --replay %s: %v\n", opts.Replay, err)
			return exitInput
		}
	}
	how := "twice in one driver process"
	if r.Hello().Restart {
		how = "twice, the driver started for each run (its hello asks for restart)"
	}
	diff := drive.AnswersDiffer(first, runs[0])
	if diff != "" {
		how = "in two fresh driver processes"
	} else {
		diff = drive.AnswersDiffer(runs[0], runs[1])
	}
	switch {
	case diff != "":
		fmt.Fprintf(opts.Stdout, "NOT DETERMINISTIC: the calls run %s, the driver answered differently %s.\n"+
			"Its answers depend on the programs it ran before: reset must give a fresh runtime, addresses included, or the hello must ask for restart (drive/PROTOCOL.md, Determinism)\n", how, diff)
		return exitViolation
	case runs[0].Failure != nil || runs[1].Failure != nil:
		fail := runs[0].Failure
		if fail == nil {
			fail = runs[1].Failure
		}
		fmt.Fprintf(opts.Stdout, "NOT DETERMINISTIC: run again %s, the calls failed: %v\n", how, fail)
		return exitViolation
	}
	fmt.Fprintf(opts.Stdout, "deterministic: the calls run %s, and in another fresh driver, got the same answers, addresses included (up to where the heap lies)\n", how)
	return exitClean
}

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
func replayCalls(cfg drive.Config, opts Options) harness.Outcome {
	prog, err := readReplay(opts.Replay)
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: --replay %s: %v\n", opts.Replay, err)
		return exitInput
	}
	if opts.Against != "" {
		return replayAgainst(prog, opts)
	}
	r, err := drive.NewRunner(cfg)
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: %v\n", err)
		return exitInput
	}
	if r.Hello().Tfjs() {
		return replayTfjs(r, prog, opts)
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
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: --replay %s: %v\n", opts.Replay, err)
		return exitInput
	}
	cerr := r.Close()
	fmt.Fprintf(opts.Stdout, "%s", res.Listing())
	if cerr != nil { // a driver that misbehaved at the end is a finding, shown with what came before
		fmt.Fprintf(opts.Stdout, "\nthe driver misbehaved at the end of its input: %v\n", cerr)
		if res.Failure == nil {
			return exitViolation
		}
	}
	if fail := res.Failure; fail != nil {
		fmt.Fprintf(opts.Stdout, "\n%s at call %d: %s\n", fail.What, fail.Call, fail.Message)
		if fail.Stderr != "" || fail.Trouble() {
			fmt.Fprintf(opts.Stdout, "%s\n", drive.StderrText(fail.Stderr))
		}
		return exitViolation
	}
	fmt.Fprintf(opts.Stdout, "\n%s replayed on %s: no failure\n", plural.Count(calls, "call"), describeDriver(r.Hello(), opts.Line))
	return replayedTwice(cfg, opts, res)
}

// replayAgainst runs a layer-5 calls file once on the driver of --exec and
// the one of --against and compares their answers call by call
// (drive.Compare), each run held to the model: a disagreement is shown
// (exit 1), as a search would show it, unshrunk; one that a departure a
// driver declares explains is said so (exit 0).
func replayAgainst(prog *replayProgram, opts Options) harness.Outcome {
	if prog.errT != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: --replay %s with --against: the differential compares layer-5 programs: %v\n", opts.Replay, prog.errT)
		return exitInput
	}
	against, ok := againstCommand(opts)
	if !ok {
		return exitInput
	}
	runners, ok := startBoth(opts, against)
	if !ok {
		return exitInput
	}
	defer runners[0].Close()
	defer runners[1].Close()
	d, dep, err := drive.Compare(runners[0], runners[1], prog.tcalls, drive.DiffOptions{ModelA: true, ModelB: true})
	if err != nil {
		fmt.Fprintf(opts.Stderr, "tlcheck fuzz: --replay %s: %v\n", opts.Replay, err)
		return exitInput
	}
	a, b := describeDriver(runners[0].Hello(), opts.Line), describeDriver(runners[1].Hello(), opts.Against)
	switch {
	case d != nil:
		fmt.Fprintf(opts.Stdout, "%s", d.Report())
		return exitViolation
	case dep != nil:
		fmt.Fprintf(opts.Stdout, "%s", dep.Report())
		fmt.Fprintf(opts.Stdout, "set aside: driver %s declares this departure, %s (%s)\n", dep.Driver, dep.Departure.Name, dep.Departure.Note)
		return exitClean
	}
	fmt.Fprintf(opts.Stdout, "%s replayed on %s and %s: no disagreement\n", plural.Count(len(prog.tcalls), "call"), a, b)
	return exitClean
}
