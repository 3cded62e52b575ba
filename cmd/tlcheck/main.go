// Command tlcheck checks a tensor runtime's memory management against the
// reference model. (Helper: replace this comment with the command's doc.)
package main

import (
	"fmt"
	"io"
	"os"
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
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	isTTY  func(w io.Writer) bool // whether w is a terminal (progress, colour)
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
	{"faults", "list the runtime's fault catalog", runFaults},
	{"selftest", "hunt every catalogued fault and report how fast each is caught", runSelftest},
}

func main() {
	os.Exit(run(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, isTTY: isTerminal}, os.Args[1:]))
}

// run dispatches to the subcommand named by args[0].
func run(e *env, args []string) int {
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
