// Command tlcheck checks a tensor runtime's memory management against the
// reference model.
//
// Usage:
//
//	tlcheck replay [--format text|json|sarif|junit] [--from auto|trace|mtrace|torch-snapshot] [--binary PROG]
//	               [--fail-on KINDS] [--require-end] [--suppressions FILE] [--cpuprofile OUT] FILE...
//	tlcheck gate --baseline FILE [--update] [--tolerance T] [replay's flags] TRACE...
//	tlcheck export --format perfetto|pprof|html|torch-snapshot [--out FILE] [--from auto|trace|mtrace|torch-snapshot] TRACE
//	tlcheck suspects [--iteration SITE] [--format text|json|sarif] [--fail-on leak-suspect] FILE...
//	tlcheck explain [--recorded CONF] [--setting CONF]... [--capacity BYTES] [--format text|json] SNAPSHOT
//	tlcheck fuzz ...
//	tlcheck faults
//	tlcheck selftest ...
//	tlcheck version            (or tlcheck --version)
//	tlcheck help [COMMAND]     (or tlcheck -h, -help, --help)
//
// replay reads recorded traces (tlcheck trace format, either layout, a
// glibc mtrace log or a PyTorch memory snapshot, told apart by their first
// bytes unless --from names one;
// "-" is standard input; --binary PROG turns a log's callers in PROG into
// file:line), checks each against the model and prints a report per file:
// a human one in the style of AddressSanitizer, or with --json the
// contract's JSON object (one file) or one such object per line with a
// "file" field (several files); --format sarif and junit write what code
// scanning and CI test tabs read. gate replays traces the same way and
// fails only on what a committed baseline does not already hold.
//
// Exit codes, for every subcommand:
//
//	0  clean: no violation
//	1  a violation or counterexample found
//	2  bad usage or unreadable input
//
// With several files the exit code is the worst of theirs.
//
// A usage error (an unknown command or flag, a missing argument) prints the
// error and the command's one-line usage, not its whole help, which
// 'tlcheck help COMMAND' prints.
//
// Each subcommand lives in its own file and sees the world only through an
// env, so that tests run it without a process.
// Its usage text lives in usage/COMMAND.txt; README.md here gathers them
// (go generate).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/tlcheck/tlcheck/internal/exitcode"
)

// Exit codes, as the contract fixes them (package exitcode).
const (
	exitClean     = exitcode.Clean
	exitViolation = exitcode.Violation
	exitInput     = exitcode.Input
)

// env is what a subcommand may touch, so that every command runs in tests
// without a process.
type env struct {
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	isTTY   func(w io.Writer) bool // whether w is a terminal (progress, colour)
	noColor bool                   // NO_COLOR is set: never colour

	// buildInfo returns what the toolchain recorded in the binary;
	// nil means debug.ReadBuildInfo. Tests give their own.
	buildInfo func() (*debug.BuildInfo, bool)
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
	{"gate", "fail CI on findings beyond a baseline (new bugs, growth)", runGate},
	{"fuzz", "generate programs against the runtime, with the model as oracle", runFuzz},
	{"export", "write a trace as a Perfetto timeline, a pprof profile, an HTML page or a PyTorch memory snapshot", runExport},
	{"suspects", "name leak suspects in a trace without an end: what a loop keeps every iteration", runSuspects},
	{"explain", "why a PyTorch snapshot ran out of memory, and which allocator settings would have fit", runExplain},
	{"faults", "list the runtime's fault catalog", runFaults},
	{"selftest", "hunt every catalogued fault and report how fast each is caught", runSelftest},
	{"version", "print tlcheck's version and how it was built", runVersion},
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
	if len(args) == 0 {
		usage(e.stderr) // as the go command does: the list is the hint
		return exitInput
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(e.stderr) // help asked for with a flag goes where flag's does
		return exitClean
	case "help":
		return runHelp(e, args[1:])
	case "-version", "--version":
		return runVersion(e, args[1:])
	}
	if c, ok := lookup(args[0]); ok {
		return c.run(e, args[1:])
	}
	what := "command"
	if strings.HasPrefix(args[0], "-") {
		what = "flag" // tlcheck takes no flags before the command
	}
	fmt.Fprintf(e.stderr, "tlcheck: unknown %s %q\nRun 'tlcheck help' for usage.\n", what, args[0])
	return exitInput
}

// lookup returns the subcommand called name.
func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: tlcheck <command> [flags] [args]")
	fmt.Fprintln(w)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'tlcheck help <command>' for a command's usage and flags.")
	fmt.Fprintln(w, "Exit status: 0 clean, 1 a violation or counterexample, 2 bad usage or unreadable input.")
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
// the usage and succeeds, anything else is a usage error (see usageError).
// ok is true when err is nil and the command should go on.
func badFlags(e *env, name, usage string, err error) (code int, ok bool) {
	switch {
	case err == nil:
		return exitClean, true
	case err == flag.ErrHelp:
		fmt.Fprint(e.stderr, usage)
		return exitClean, false
	default:
		return usageError(e, name, usage, err), false
	}
}

// usageError prints a usage error as the go command does: the error, the
// command's usage line (the first line of its usage text) and where the
// rest is, never the whole help, which would bury the error. It returns
// the exit code of bad usage.
//
//	tlcheck replay: flag provided but not defined: -jsn
//	usage: tlcheck replay [flags] FILE...
//	Run 'tlcheck help replay' for details.
func usageError(e *env, name, usage string, err error) int {
	line, _, _ := strings.Cut(usage, "\n")
	fmt.Fprintf(e.stderr, "tlcheck %s: %v\n%s\nRun 'tlcheck help %s' for details.\n", name, err, line, name)
	return exitInput
}
