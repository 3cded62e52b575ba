// Package buildinfo writes what the Go toolchain recorded in a binary
// (runtime/debug.BuildInfo) as tlcheck version prints it:
//
//	tlcheck v1.2.0
//	  module    github.com/tlcheck/tlcheck
//	  go        go1.26.8 linux/amd64
//	  revision  0123abcd...
//	  time      2026-11-25T23:57:24Z
//	  modified  false
//
// The version is the module's ("(devel)" for a build from a checkout);
// lines the binary holds nothing for are left out, and a binary built
// without module support (no BuildInfo) gets a line that says so and the
// Go version of the running toolchain.
package buildinfo

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Write writes bi (ok as debug.ReadBuildInfo returns it) to w, for the
// program called name. The error is w's.
func Write(w io.Writer, name string, bi *debug.BuildInfo, ok bool) error {
	var b bytes.Buffer
	if !ok || bi == nil {
		fmt.Fprintf(&b, "%s (version unknown: the binary holds no build information)\n", name)
		fmt.Fprintf(&b, "  %-9s %s %s/%s\n", "go", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		_, err := w.Write(b.Bytes())
		return err
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	fmt.Fprintf(&b, "%s %s\n", name, version)
	if bi.Main.Path != "" {
		fmt.Fprintf(&b, "  %-9s %s\n", "module", bi.Main.Path)
	}
	goVersion := bi.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	fmt.Fprintf(&b, "  %-9s %s %s/%s\n", "go", goVersion, runtime.GOOS, runtime.GOARCH)
	for _, key := range []string{"vcs.revision", "vcs.time", "vcs.modified"} {
		for _, s := range bi.Settings {
			if s.Key == key && s.Value != "" {
				fmt.Fprintf(&b, "  %-9s %s\n", key[len("vcs."):], s.Value)
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}
