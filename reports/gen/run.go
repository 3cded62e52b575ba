package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// timing is what the runs of one command measured.
type timing struct {
	Command string
	Wall    []time.Duration // per run
	CPU     []time.Duration // per run: user and system time
	MaxRSS  int64           // bytes: the largest peak resident set of any run
}

func (t timing) wall() time.Duration { return medianDuration(t.Wall) }
func (t timing) cpu() time.Duration  { return medianDuration(t.CPU) }

func medianDuration(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// command returns a command that reports on stderr.
func command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	return cmd
}

// job is a command to time, its stdout going to a file.
type job struct {
	out  string
	name string
	args []string
}

// timeInterleaved runs the jobs in turn, n rounds, so that a busy moment
// of the machine falls on all of them alike rather than on one. Each round
// starts one job further on, so that no job always runs right after the
// same other one: with a fixed order, a report measured the working
// tree's tlcheck (always right after the script) 1.14x slower than the
// baseline (always right after it), where alternating runs of the two
// found them equal. Exit status 1 is a verdict (leaks found), not a
// failure.
func timeInterleaved(n int, jobs ...job) ([]timing, error) {
	ts := make([]timing, len(jobs))
	for i, j := range jobs {
		ts[i].Command = strings.Join(append([]string{filepath.Base(j.name)}, j.args...), " ")
	}
	for round := range n {
		for k := range jobs {
			i := (round + k) % len(jobs)
			if err := timeOnce(&ts[i], jobs[i]); err != nil {
				return nil, err
			}
		}
	}
	return ts, nil
}

func timeOnce(t *timing, j job) error {
	f, err := os.Create(j.out)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := command(j.name, j.args...)
	cmd.Stdout = f
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		return fmt.Errorf("%s: %w", t.Command, err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return fmt.Errorf("%s: no resource usage on this system", t.Command)
	}
	t.Wall = append(t.Wall, wall)
	t.CPU = append(t.CPU, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
	t.MaxRSS = max(t.MaxRSS, ru.Maxrss*1024) // Linux reports KiB
	return nil
}

// shimC switches glibc's tracing on in any process that preloads it. The
// destructor does not call muntrace: glibc logs until the process exits.
const shimC = `#include <mcheck.h>
__attribute__((constructor)) static void tlcheck_on(void) { mtrace(); }
__attribute__((destructor)) static void tlcheck_off(void) { }
`

// buildShim builds the shim in dir and returns the LD_PRELOAD value.
func buildShim(dir string) (string, error) {
	src, so := filepath.Join(dir, "shim.c"), filepath.Join(dir, "shim.so")
	if err := os.WriteFile(src, []byte(shimC), 0o644); err != nil {
		return "", err
	}
	if err := command("gcc", "-shared", "-fPIC", "-o", so, src).Run(); err != nil {
		return "", fmt.Errorf("building the mtrace shim: %w", err)
	}
	return "libc_malloc_debug.so.0 " + so, nil
}

// workload allocates the way a data-processing script does: many small
// dicts, lists and strings, built, serialized, parsed and dropped.
const workload = `import json, sys
total = 0
for r in range(int(sys.argv[1])):
    rows = [{"id": i, "name": "row%d" % i, "tags": [str(i), str(i * 2)]} for i in range(200)]
    total += len(json.loads(json.dumps(rows)))
print(total)
`

// pythonLog runs the workload under CPython with every allocation going to
// malloc, tracing into log, and describes what ran.
func pythonLog(preload, log string, iterations int) (string, error) {
	// python3 may be a wrapper script (pyenv) whose every process would
	// log into the same file: run the interpreter itself.
	exe, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return "", fmt.Errorf("finding python3: %w", err)
	}
	python := strings.TrimSpace(string(exe))
	version, _ := exec.Command(python, "--version").Output()
	cmd := command(python, "-c", workload, fmt.Sprint(iterations))
	cmd.Env = append(os.Environ(), "PYTHONMALLOC=malloc", "LD_PRELOAD="+preload, "MALLOC_TRACE="+log)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("running the Python workload: %w", err)
	}
	return fmt.Sprintf("%s, PYTHONMALLOC=malloc, %d rounds of building, serializing and parsing 200 JSON rows",
		strings.TrimSpace(string(version)), iterations), nil
}

// sizeOf returns the size and line count of a file.
func sizeOf(path string) (int64, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var size int64
	lines := 0
	buf := make([]byte, 1<<20)
	for {
		n, err := br.Read(buf)
		size += int64(n)
		lines += bytes.Count(buf[:n], []byte("\n"))
		if err != nil {
			break
		}
	}
	return size, lines, nil
}
