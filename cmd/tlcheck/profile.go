package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

// startProfile starts a CPU profile that stop writes to out, whole and
// atomically. out must not name one of the inputs: a profile never
// replaces what the user asked to have checked.
func startProfile(out string, inputs []string) (stop func() error, err error) {
	for _, in := range inputs {
		if in != "-" && samePath(in, out) {
			return nil, errors.New(out + " is one of the files to replay")
		}
	}
	if _, err := os.Stat(filepath.Dir(out)); err != nil {
		return nil, err // fail before the replay, not after
	}
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return atomicfile.Replace(out, buf.Bytes())
	}, nil
}

// samePath reports whether a and b name the same file: the same path, or
// the same existing file under two names.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
