package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

const versionUsage = `usage: tlcheck version

Prints tlcheck's version and how it was built, as the Go toolchain recorded
it in the binary: the module version (the release that 'go install
github.com/tlcheck/tlcheck/cmd/tlcheck@VERSION' installed, or "(devel)" for
a build from a checkout), the Go version and platform, and for a build in
a git checkout the commit, its time, and whether the tree had uncommitted
changes. 'tlcheck --version' is the same.
`

// runVersion prints the build information:
//
//	tlcheck v1.2.0
//	  module    github.com/tlcheck/tlcheck
//	  go        go1.26.8 linux/amd64
//	  revision  0123abcd...
//	  time      2026-11-25T23:57:24Z
//	  modified  false
//
// Lines the binary has no information for are left out.
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
	w := e.stdout
	bi, ok := read()
	if !ok || bi == nil {
		// A binary built without module support records nothing.
		fmt.Fprintln(w, "tlcheck (version unknown: the binary holds no build information)")
		fmt.Fprintf(w, "  %-9s %s %s/%s\n", "go", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return exitClean
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	fmt.Fprintf(w, "tlcheck %s\n", version)
	if bi.Main.Path != "" {
		fmt.Fprintf(w, "  %-9s %s\n", "module", bi.Main.Path)
	}
	goVersion := bi.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	fmt.Fprintf(w, "  %-9s %s %s/%s\n", "go", goVersion, runtime.GOOS, runtime.GOARCH)
	for _, key := range []string{"vcs.revision", "vcs.time", "vcs.modified"} {
		for _, s := range bi.Settings {
			if s.Key == key && s.Value != "" {
				fmt.Fprintf(w, "  %-9s %s\n", key[len("vcs."):], s.Value)
			}
		}
	}
	return exitClean
}
