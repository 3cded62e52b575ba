package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/traces"
)

// leakC leaks one block from a helper and one from main, on known lines.
const leakC = `#include <stdlib.h>
static void *helper(size_t n) {
	return malloc(n);
}
int main(void) {
	void *a = malloc(32);
	void *b = helper(64);
	free(a);
	return b == 0;
}
`

// TestReplayBinary traces a program built with -g, as a PIE and at a fixed
// address, and replays its log with --binary: each leak's site must be the
// file:line that glibc's 'mtrace PROG LOG' prints (which resolves a PIE's
// callers), or for the fixed-address build, where that script cannot,
// what addr2line says of the caller's link-time address.
func TestReplayBinary(t *testing.T) {
	dir := t.TempDir()
	preload := mtraceTools(t, dir)
	src := filepath.Join(dir, "leak.c")
	if err := os.WriteFile(src, []byte(leakC), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		flags []string
	}{
		{"pie", []string{"-fPIE", "-pie"}},
		{"no-pie", []string{"-fno-pie", "-no-pie"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bin := filepath.Join(dir, "leak-"+tt.name)
			if out, err := exec.Command("gcc", append(append([]string{"-g", "-O0", "-o", bin}, tt.flags...), src)...).CombinedOutput(); err != nil {
				t.Fatalf("gcc: %v\n%s", err, out)
			}
			log := mtraceLog(t, preload, dir, "leak-"+tt.name, nil, bin)

			var stdout, stderr bytes.Buffer
			code := run(&env{stdout: &stdout, stderr: &stderr}, []string{"replay", "--json", "--binary", bin, log})
			if code != exitViolation {
				t.Fatalf("exit %d, want %d: %s", code, exitViolation, stderr.String())
			}
			var rep traces.Report
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range rep.Violations {
				if v.Kind == traces.Leak {
					for _, r := range v.Related {
						if r.What == "allocated" {
							got = append(got, r.Site)
						}
					}
				}
			}
			var want []string
			if tt.name == "pie" {
				want = scriptCallers(t, bin, log)
			} else {
				want = []string{addr2lineOf(t, bin, log)}
			}
			// The helper's block leaks (main's is freed); its caller is a
			// return address, in the helper's lines 3 and 4.
			if len(want) != 1 || want[0] != src+":3" && want[0] != src+":4" {
				t.Fatalf("the leak is said to be from %q, not from the helper's lines in %s", want, src)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("leak sites %q, want %q\nlog:\n%s", got, want, logText(t, log))
			}

			// Without --binary the callers stay as glibc wrote them.
			stdout.Reset()
			run(&env{stdout: &stdout, stderr: &stderr}, []string{"replay", log})
			if !regexp.MustCompile(`allocated here: event 1 \(line 3, \S+:\[0x[0-9a-f]+\]\)`).MatchString(stdout.String()) {
				t.Errorf("without --binary, callers were changed:\n%s", stdout.String())
			}
		})
	}
}

// scriptCallers runs glibc's 'mtrace BIN LOG' and returns the callers of
// its table of memory not freed.
func scriptCallers(t *testing.T, bin, log string) []string {
	t.Helper()
	out, err := exec.Command("mtrace", bin, log).Output()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("mtrace: %v", err)
	}
	var callers []string
	for _, m := range regexp.MustCompile(`(?m)^0x[0-9a-f]+ +(?:0x[0-9a-f]+|0)  at (.*)$`).FindAllStringSubmatch(string(out), -1) {
		callers = append(callers, m[1])
	}
	if len(callers) == 0 {
		t.Fatalf("mtrace's script lists no leak:\n%s", out)
	}
	return callers
}

// addr2lineOf runs addr2line on the link-time address of the log's second
// malloc (the helper's): its offset plus the fixed-address base.
func addr2lineOf(t *testing.T, bin, log string) string {
	t.Helper()
	m := regexp.MustCompile(`\[0x([0-9a-f]+)\] \+ 0x[0-9a-f]+ 0x40\n`).FindStringSubmatch(logText(t, log))
	if m == nil {
		t.Fatalf("no malloc of 0x40 in the log")
	}
	off, _ := strconv.ParseUint(m[1], 16, 64)
	out, err := exec.Command("addr2line", "-e", bin, fmt.Sprintf("%#x", off+0x400000)).Output()
	if err != nil {
		t.Skipf("addr2line: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func logText(t *testing.T, log string) string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReplayBinaryErrors: a --binary that cannot serve fails the command
// before any file is read.
func TestReplayBinaryErrors(t *testing.T) {
	p := files(t, "log.mtrace", "= Start\n+ 0x10 0x8\n", "prog.c", leakC)
	tests := []struct {
		name   string
		binary string
		want   string
	}{
		{"missing", filepath.Join(filepath.Dir(p[0]), "nope"), "tlcheck replay: --binary: open "},
		{"not ELF", p[1], "not an ELF binary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := replay("", "--binary", tt.binary, p[0])
			if code != exitInput || stdout != "" || !strings.Contains(stderr, tt.want) || !strings.Contains(stderr, tt.binary) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, nothing checked, and %q naming %s", code, stdout, stderr, tt.want, tt.binary)
			}
		})
	}
}
