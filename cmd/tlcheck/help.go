package main

import (
	"fmt"
	"strings"
)

// runHelp prints the command list or one command's usage, on stdout: help
// asked for by name is the command's output, to page or to grep.
func runHelp(e *env, args []string) int {
	switch {
	case len(args) == 0:
		usage(e.stdout)
		return exitClean
	case len(args) > 1:
		return usageError(e, "help", helpUsage, fmt.Errorf("unexpected argument %q", args[1]))
	case args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help":
		fmt.Fprint(e.stdout, helpUsage)
		return exitClean
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(e.stderr, "tlcheck help: unknown command %q\nThe commands: %s.\n", args[0], commandNames())
		return exitInput
	}
	// Each command prints its own usage on -h, so asking it keeps one text
	// per command, next to its flags; its stderr is help's stdout.
	he := *e
	he.stdin = strings.NewReader("")
	he.stderr = e.stdout
	return c.run(&he, []string{"-h"})
}

// commandNames lists the commands' names, comma-separated.
func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}
