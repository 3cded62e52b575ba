package main

import (
	"flag"
	"fmt"

	"github.com/tlcheck/tlcheck/drive"
)

// misuseFlag reads --misuse: given, it decides; left out, the driver's
// hello does.
func misuseFlag(fs *flag.FlagSet, on bool) drive.Misuse {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "misuse" })
	switch {
	case !set:
		return drive.MisuseAsHello
	case on:
		return drive.MisuseOn
	}
	return drive.MisuseOff
}

// replayedTwice follows a --replay that gave no failure: the same calls
// run twice in one fresh driver must get the same answers, addresses
// included (PROTOCOL.md, Determinism). A calls file that failed in the
// search and not here is the usual sign of a driver that is not
// deterministic, and that is said, with where the answers differ; a
// driver that is not is a finding (exit 1).
func replayedTwice(e *env, cfg drive.Config, opts fuzzExecOptions, first *drive.Result) int {
	r, err := drive.NewRunner(cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "tlcheck fuzz: %v\n", err)
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
			fmt.Fprintf(e.stderr, "tlcheck fuzz: --replay %s: %v\n", opts.replay, err)
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
		fmt.Fprintf(e.stdout, "NOT DETERMINISTIC: the calls run %s, the driver answered differently %s.\n"+
			"Its answers depend on the programs it ran before: reset must give a fresh runtime, addresses included, or the hello must ask for restart (drive/PROTOCOL.md, Determinism)\n", how, diff)
		return exitViolation
	case runs[0].Failure != nil || runs[1].Failure != nil:
		fail := runs[0].Failure
		if fail == nil {
			fail = runs[1].Failure
		}
		fmt.Fprintf(e.stdout, "NOT DETERMINISTIC: run again %s, the calls failed: %v\n", how, fail)
		return exitViolation
	}
	fmt.Fprintf(e.stdout, "deterministic: the calls run %s, and in another fresh driver, got the same answers, addresses included (up to where the heap lies)\n", how)
	return exitClean
}
