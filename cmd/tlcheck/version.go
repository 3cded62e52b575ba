package main

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/tlcheck/tlcheck/internal/buildinfo"
)

// runVersion prints the build information (package buildinfo).
func runVersion(e *env, args []string) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if code, ok := badFlags(e, "version", versionUsage, fs.Parse(args)); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(e, "version", versionUsage, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	read := e.buildInfo
	if read == nil {
		read = debug.ReadBuildInfo
	}
	bi, ok := read()
	if err := buildinfo.Write(e.stdout, "tlcheck", bi, ok); err != nil {
		fmt.Fprintf(e.stderr, "tlcheck version: %v\n", err)
		return exitInput
	}
	return exitClean
}
