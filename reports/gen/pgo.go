package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/google/pprof/profile"

	"github.com/tlcheck/tlcheck/internal/atomicfile"
)

// pgoPath is the profile go build uses for tlcheck (profile-guided
// optimization: hot calls inlined, the Source interface devirtualized).
var pgoPath = filepath.Join("cmd", "tlcheck", "default.pgo")

// writePGO profiles tlcheck replaying the mtrace log and the JSON Lines
// benchmark, and writes the merged profile to cmd/tlcheck/default.pgo.
// The profile keeps what the compiler reads (functions, their start
// lines and the call sites' samples) and drops the file names and the
// binaries' paths, which name the machine that made it.
func writePGO(tlcheck, log, work string) error {
	mtraceProf := filepath.Join(work, "mtrace.pprof")
	cmd := command(tlcheck, "replay", "--from", "mtrace", "--json", "--cpuprofile", mtraceProf, log)
	cmd.Stdout = io.Discard
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 { // 1: leaks found
			return fmt.Errorf("profiling the mtrace replay: %w", err)
		}
	}
	jsonlProf := filepath.Join(work, "jsonl.pprof")
	cmd = command("go", "test", "-run", "^$", "-bench", "^BenchmarkJSONL$", "-benchtime", "20x",
		"-o", filepath.Join(work, "tlcheck.test"), "-cpuprofile", jsonlProf, "./cmd/tlcheck")
	cmd.Stdout = io.Discard
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("profiling BenchmarkJSONL: %w", err)
	}

	var ps []*profile.Profile
	for _, name := range []string{mtraceProf, jsonlProf} {
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		p, err := profile.ParseData(data)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, m := range p.Mapping {
			m.File, m.BuildID = filepath.Base(m.File), ""
		}
		for _, f := range p.Function {
			f.Filename = ""
		}
		p.Comments = nil
		ps = append(ps, p)
	}
	merged, err := profile.Merge(ps)
	if err != nil {
		return fmt.Errorf("merging the profiles: %w", err)
	}
	var buf bytes.Buffer
	if err := merged.Write(&buf); err != nil {
		return err
	}
	return atomicfile.Replace(pgoPath, buf.Bytes())
}
