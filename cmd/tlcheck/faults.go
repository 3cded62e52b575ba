package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/properties/hunt"
)

func runFaults(e *env, args []string) int {
	fs := flag.NewFlagSet("faults", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "")
	if code, ok := badFlags(e, "faults", faultsUsage, fs.Parse(args)); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(e, "faults", faultsUsage, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if err := hunt.WriteCatalog(e.stdout, *asJSON); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck faults: %v\n", err)
		return exitInput
	}
	return exitClean
}
