// Command tlcheck checks a tensor runtime's memory management against the
// reference model.
//
// Usage:
//
//	tlcheck replay [--json] [--from trace|mtrace] [--cpuprofile OUT] FILE...
//	tlcheck fuzz ...
//	tlcheck faults
//	tlcheck selftest ...
//
// replay reads recorded traces (tlcheck trace format, either layout, or a
// glibc mtrace log with --from mtrace; "-" is standard input), checks each
// against the model and prints a report per file: a human one in the style
// of AddressSanitizer, or with --json the contract's JSON object (one file)
// or one such object per line with a "file" field (several files).
//
// Exit codes, for every subcommand:
//
//	0  clean: no violation
//	1  a violation or counterexample found
//	2  bad usage or unreadable input
//
// With several files the exit code is the worst of theirs.
//
// Each subcommand lives in its own file and sees the world only through an
// env, so that tests run it without a process.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// Exit codes, as the contract fixes them.
const (
	exitClean     = 0 // no violation
	exitViolation = 1 // a violation or counterexample found
	exitInput     = 2 // bad usage or unreadable input
)

// env is what a subcommand may touch, so that every command runs in tests
// without a process.
type env struct {
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	isTTY   func(w io.Writer) bool // whether w is a terminal (progress, colour)
	noColor bool                   // NO_COLOR is set: never colour
}

// colour reports whether output to w may be coloured: only on a terminal,
// and never when NO_COLOR is set (https://no-color.org).
func (e *env) colour(w io.Writer) bool {
	return !e.noColor && e.isTTY != nil && e.isTTY(w)
}

// command is one subcommand: it parses args and returns an exit code.
type command struct {
	name    string
	summary string
	run     func(e *env, args []string) int
}

// commands lists the subcommands; each lives in its own file.
var commands = []command{
	{"replay", "check recorded traces against the reference model", runReplay},
	{"fuzz", "generate programs against the runtime, with the model as oracle", runFuzz},
	{"export", "write a trace as a Perfetto timeline, a pprof profile or an HTML page", runExport},
	{"faults", "list the runtime's fault catalog", runFaults},
	{"selftest", "hunt every catalogued fault and report how fast each is caught", runSelftest},
}

func main() {
	os.Exit(run(&env{
		stdin:   os.Stdin,
		stdout:  os.Stdout,
		stderr:  os.Stderr,
		isTTY:   isTerminal,
		noColor: os.Getenv("NO_COLOR") != "",
	}, os.Args[1:]))
}

// run dispatches to the subcommand named by args[0].
//
// A panic is a bug in tlcheck, never the input's fault: as a last resort
// run turns one into exit 2 with a request to report it, so that a user
// never sees a goroutine dump. FuzzReplay holds replay to never needing it.
func run(e *env, args []string) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(e.stderr, "tlcheck: internal error: %v\n", p)
			fmt.Fprintln(e.stderr, "This is a bug in tlcheck; please report it with the input and the stack below.")
			e.stderr.Write(debug.Stack())
			code = exitInput
		}
	}()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(e.stderr)
		if len(args) == 0 {
			return exitInput
		}
		return exitClean
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(e, args[1:])
		}
	}
	fmt.Fprintf(e.stderr, "tlcheck: unknown command %q\n", args[0])
	usage(e.stderr)
	return exitInput
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: tlcheck <command> [flags] [args]")
	fmt.Fprintln(w)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'tlcheck <command> -h' for a command's flags.")
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// badFlags turns a subcommand's flag-parsing error into its exit: -h prints
// the usage and succeeds, anything else prints the error and the usage and
// is bad usage. ok is true when err is nil and the command should go on.
func badFlags(e *env, name, usage string, err error) (code int, ok bool) {
	switch {
	case err == nil:
		return exitClean, true
	case err == flag.ErrHelp:
		fmt.Fprint(e.stderr, usage)
		return exitClean, false
	default:
		fmt.Fprintf(e.stderr, "tlcheck %s: %v\n\n%s", name, err, usage)
		return exitInput, false
	}
}
