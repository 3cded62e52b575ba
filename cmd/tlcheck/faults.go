package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/properties/hunt"
)

const faultsUsage = `usage: tlcheck faults [--json]

Lists the runtime's fault catalog: the documented bugs that 'tlcheck fuzz
--fault NAME' switches on and 'tlcheck selftest' hunts. Each block gives the
fault's name, what goes wrong, the historic bug it reproduces, the
shortest call sequence (or source program) that shows it, and the engine
that hunts it ("program": generated programs against the model, the
faults fuzz takes; "source": source programs lowered by the compiler's
rules, a bug of the code a compiler emits, which fuzz --source takes;
"pool": programs on the GPU allocators; "registry": concurrent histories
of the pointer registry checked for linearizability; "autograd": programs
of the autograd engine, impl/autograd, built over the runtime), and, for a
fault a second engine catches too, that engine ("also": source programs
catch the slot planner's and the arena's faults).

  --json  print {"faults":[{"name":..,"summary":..,"bug":..,"trigger":..,"engine":..,"also":..}]}
          ("also" only where there is one: the engines, comma-separated)
`

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
