// Package cpuprofile writes a CPU profile of a run (runtime/pprof) for
// go tool pprof, as tlcheck replay --cpuprofile does. The profile is
// written whole and atomically when the run stops, and never over one of
// the run's inputs: a profile never replaces what the user asked to have
// checked. A directory that is not there fails Start, before the run, not
// after it.
package cpuprofile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

// Start starts a CPU profile that stop writes to out. out must name none
// of inputs ("-", standard input, is no file); only one profile runs at
// a time in a process.
func Start(out string, inputs []string) (stop func() error, err error) {
	for _, in := range inputs {
		if in != "-" && atomicfile.SameFile(in, out) {
			return nil, errors.New(out + " is one of the files to replay")
		}
	}
	if _, err := os.Stat(filepath.Dir(out)); err != nil {
		return nil, err
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
