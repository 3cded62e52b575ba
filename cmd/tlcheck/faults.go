package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tlcheck/tlcheck/impl"
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

// faultJSON is one fault in faults --json.
type faultJSON struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	Bug     string `json:"bug"`
	Trigger string `json:"trigger"`
	Engine  string `json:"engine"`
	Also    string `json:"also,omitempty"`
}

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

	cat := impl.Catalog()
	if *asJSON {
		out := struct {
			Faults []faultJSON `json:"faults"`
		}{Faults: make([]faultJSON, len(cat))}
		for i, f := range cat {
			out.Faults[i] = faultJSON{string(f.Name), f.Summary, f.Bug, f.Trigger, f.Engine, strings.Join(f.Also, ",")}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(e.stderr, "tlcheck faults: %v\n", err)
			return exitInput
		}
		return exitClean
	}
	for i, f := range cat {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		fmt.Fprintln(e.stdout, f.Name)
		writeField(e.stdout, "summary", f.Summary)
		writeField(e.stdout, "bug", f.Bug)
		writeField(e.stdout, "trigger", f.Trigger)
		writeField(e.stdout, "engine", f.Engine)
		if also := f.Also; len(also) > 0 {
			writeField(e.stdout, "also", strings.Join(also, ", "))
		}
	}
	return exitClean
}

// writeField writes "  label:  text", the text wrapped at 80 columns under
// itself.
func writeField(w io.Writer, label, text string) {
	const width, indent = 80, 11
	line := fmt.Sprintf("  %-*s", indent-2, label+":")
	col := indent
	for i, word := range strings.Fields(text) {
		if i > 0 && col+1+len(word) > width {
			fmt.Fprintln(w, line)
			line, col = strings.Repeat(" ", indent), indent
		} else if i > 0 {
			line += " "
			col++
		}
		line += word
		col += len(word)
	}
	fmt.Fprintln(w, line)
}
